/* Helpers of the fluxmap-cli test programs: spawn the binary, temporary files, parse its JSON. */
#include "tests/cli/cli-test-util.h"
#include "tests/test-tree.h"

#include <glib/gstdio.h>
#include <sys/wait.h>

const char *cli_path;
char *tmp_dir;

void cli_result_clear(cli_result *r)
{
    g_free(r->out);
    g_free(r->err);
}

gboolean cli_test_init(const char *tmp_template)
{
    cli_path = g_getenv("FLUXMAP_CLI");
    if (!cli_path)
        return FALSE;
    tmp_dir = g_dir_make_tmp(tmp_template, NULL);
    g_assert_nonnull(tmp_dir);
    return TRUE;
}

int cli_test_finish(int status)
{
    fm_test_remove_tree(tmp_dir);
    g_clear_pointer(&tmp_dir, g_free);
    return status;
}

cli_result cli_test_runv(const char *cwd, char **envp, const char *first, va_list ap)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)cli_path);
    for (const char *a = first; a; a = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    g_ptr_array_add(argv, NULL);
    cli_result r = {0};
    int wait_status = 0;
    g_autoptr(GError) error = NULL;
    gboolean ok = g_spawn_sync(cwd, (char **)argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &r.out,
                               &r.err, &wait_status, &error);
    g_assert_no_error(error);
    g_assert_true(ok);
    g_assert_true(WIFEXITED(wait_status)); /* a crash is never an acceptable answer */
    r.status = WEXITSTATUS(wait_status);
    return r;
}

cli_result cli_test_run(const char *cwd, char **envp, const char *first, ...)
{
    va_list ap;
    va_start(ap, first);
    cli_result r = cli_test_runv(cwd, envp, first, ap);
    va_end(ap);
    return r;
}

char *cli_test_tmp_path(const char *name)
{
    return g_build_filename(tmp_dir, name, NULL);
}

JsonObject *cli_test_parse_object(const char *text, JsonParser **parser_out)
{
    JsonParser *parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    json_parser_load_from_data(parser, text, -1, &error);
    g_assert_no_error(error);
    JsonNode *root = json_parser_get_root(parser);
    g_assert_true(JSON_NODE_HOLDS_OBJECT(root));
    *parser_out = parser;
    return json_node_get_object(root);
}
