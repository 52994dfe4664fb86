/* A method and its parameters from the command line, shared by `run` and `live`. */
#include "app/cli/cli-method-args.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/cli/cli-roi.h"
#include "kernels/device.h"

int fm_cli_parse_method_args(int argc, char **argv, const char *command, const fm_cli_option *table,
                             int n, void (*help)(void), fm_cli_args *args, const fm_method **method,
                             fm_params **params, fm_backend *backend)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        if (argc < 1)
            return fm_cli_fail(FM_EXIT_USAGE,
                               _("%s: missing METHOD (see 'fluxmap-cli %s "
                                 "--help')"),
                               command, command);
        help();
        return -1;
    }
    *method = fm_method_find(argv[0]);
    if (!*method)
        return fm_cli_fail(FM_EXIT_USAGE, _("unknown method '%s' (see 'fluxmap-cli methods')"),
                           argv[0]);
    /* every schema key becomes an option that takes a value */
    g_autoptr(GHashTable) extra = g_hash_table_new(g_str_hash, g_str_equal);
    for (int i = 0; i < (*method)->n_params; i++)
        g_hash_table_insert(extra, (gpointer)(*method)->params[i].key, GINT_TO_POINTER(TRUE));
    fm_cli_roi_add_options(extra); /* --roi-labels, --export-rois */
    g_autofree char *message = NULL;
    if (!fm_cli_parse(argc - 1, argv + 1, table, n, extra, args, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s: %s", (*method)->id, message);
    if (fm_cli_has(args, "help")) {
        help();
        return -1;
    }
    *params = fm_method_default_params(*method);
    for (int i = 0; i < (*method)->n_params; i++) {
        const char *key = (*method)->params[i].key;
        const char *value = fm_cli_get(args, key);
        g_autoptr(GError) error = NULL;
        if (value && !fm_params_set_from_string(*params, key, value, &error))
            return fm_cli_fail(FM_EXIT_USAGE, "%s: %s", (*method)->id, error->message);
    }
    const char *backend_text = fm_cli_get(args, "backend");
    *backend = FM_BACKEND_AUTO;
    if (backend_text && fm_backend_parse(backend_text, backend) != FM_OK)
        return fm_cli_fail(FM_EXIT_USAGE, _("--backend: '%s' is not one of auto, cpu, cuda"),
                           backend_text);
    return FM_EXIT_OK;
}

int fm_cli_method_command(int argc, char **argv, fm_cli_method_parse_fn parse,
                          fm_cli_method_execute_fn execute)
{
    fm_cli_args args = {0};
    const fm_method *method = NULL;
    fm_params *params = NULL;
    fm_backend backend = FM_BACKEND_AUTO;
    int code = parse(argc, argv, &args, &method, &params, &backend);
    if (code == FM_EXIT_OK)
        code = execute(method, params, backend, &args);
    else if (code < 0)
        code = FM_EXIT_OK; /* --help */
    if (params)
        fm_params_free(params);
    fm_cli_args_clear(&args);
    return code;
}
