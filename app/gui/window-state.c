/* The pages' state between sessions: the method each family page shows and its parameters, as the
 * user left them, in $XDG_CONFIG_HOME/fluxmap/pages.ini (one group per page). */
#include <errno.h>

#include <glib/gi18n.h>

#include "window-private.h"

static char *state_path(void)
{
    return g_build_filename(g_get_user_config_dir(), "fluxmap", "pages.ini", NULL);
}

void fm_window_state_save(FmWindow *win)
{
    g_autoptr(GKeyFile) file = g_key_file_new();
    for (guint i = 0; win->pages != NULL && i < win->pages->len; i++) {
        FmFamilyPage *page = win->pages->pdata[i];
        const fm_method *method = fm_family_page_get_method(page);
        g_autoptr(fm_params) params = method ? fm_family_page_get_params(page) : NULL;
        if (params == NULL)
            continue; /* no method panel, or a value out of range: the last saved state stays */
        const char *id = fm_family_page_get_id(page);
        g_autofree char *json = fm_params_to_json(params);
        g_key_file_set_string(file, id, "method", method->id);
        g_key_file_set_string(file, id, "params", json);
    }
    g_autofree char *path = state_path();
    g_autofree char *dir = g_path_get_dirname(path);
    g_autoptr(GError) error = NULL;
    if (g_mkdir_with_parents(dir, 0700) != 0 || !g_key_file_save_to_file(file, path, &error))
        g_warning("%s: the pages' methods and parameters were not saved: %s", path,
                  error ? error->message : g_strerror(errno));
}

/* Values the user typed for method, set through the page as the CLI would read them. File
 * paths (an IRF, an input-function table) belong to the dataset they went with: not restored. */
static void restore_params(FmFamilyPage *page, const fm_method *method, const char *json)
{
    g_autoptr(fm_params) params = fm_method_default_params(method);
    g_autoptr(GError) error = NULL;
    if (!fm_params_set_from_json(params, json, &error)) {
        g_debug("saved parameters of %s ignored: %s", method->id, error->message);
        return;
    }
    int n = 0;
    const fm_param_spec *specs = fm_params_specs(params, &n);
    for (int k = 0; k < n; k++) {
        if (specs[k].type == FM_PARAM_STRING)
            continue;
        g_autofree char *text = fm_params_to_string(params, specs[k].key);
        fm_family_page_set_param(page, specs[k].key, text);
    }
}

void fm_window_state_restore(FmWindow *win)
{
    g_autofree char *path = state_path();
    g_autoptr(GKeyFile) file = g_key_file_new();
    if (!g_key_file_load_from_file(file, path, G_KEY_FILE_NONE, NULL))
        return; /* first start, or an unreadable file: the defaults */
    for (guint i = 0; i < win->pages->len; i++) {
        FmFamilyPage *page = win->pages->pdata[i];
        const char *id = fm_family_page_get_id(page);
        g_autofree char *method_id = g_key_file_get_string(file, id, "method", NULL);
        g_autofree char *json = g_key_file_get_string(file, id, "params", NULL);
        const fm_method *method = method_id ? fm_method_find(method_id) : NULL;
        if (method == NULL || json == NULL || !fm_family_page_select_method(page, method_id))
            continue; /* a method this build no longer has */
        restore_params(page, method, json);
    }
}
