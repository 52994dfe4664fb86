/* fluxmap-cli option values (numbers with range checks, the seed) and the parse-then-run step
 * that the sub-commands share. */
#include <glib/gi18n.h>
#include <math.h>

#include "app/cli/cli.h"

/* An integer in min..G_MAXINT; what names the accepted range in the message. */
static gboolean get_ranged_int(const fm_cli_args *args, const char *name, gint64 min,
                               const char *what, int *out, char **message)
{
    const char *text = fm_cli_get(args, name);
    gint64 v;
    if (!text)
        return TRUE;
    if (!g_ascii_string_to_signed(text, 10, min, G_MAXINT, &v, NULL)) {
        *message = g_strdup_printf(what, name, text);
        return FALSE;
    }
    *out = (int)v;
    return TRUE;
}

gboolean fm_cli_get_int(const fm_cli_args *args, const char *name, int *out, char **message)
{
    return get_ranged_int(args, name, G_MININT, _("--%s: '%s' is not an integer"), out, message);
}

gboolean fm_cli_get_positive_int(const fm_cli_args *args, const char *name, int *out,
                                 char **message)
{
    return get_ranged_int(args, name, 1, _("--%s: '%s' is not a positive integer"), out, message);
}

gboolean fm_cli_get_double(const fm_cli_args *args, const char *name, double *out, char **message)
{
    const char *text = fm_cli_get(args, name);
    if (!text)
        return TRUE;
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (!*text || *end || !isfinite(v)) {
        *message = g_strdup_printf(_("--%s: '%s' is not a number"), name, text);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

gboolean fm_cli_get_seed(const fm_cli_args *args, guint64 *out, char **message)
{
    const char *text = fm_cli_get(args, "seed");
    guint64 seed = *out;
    if (text && !g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, &seed, NULL)) {
        *message = g_strdup_printf(_("--seed: '%s' is not an unsigned integer"), text);
        return FALSE;
    }
    *out = seed;
    return TRUE;
}

/* Runs body after the checks of fm_cli_parse_and_run_options (help != NULL) or none. */
static int parse_and_run(int argc, char **argv, const char *command, const fm_cli_option *table,
                         int n, void (*help)(void), fm_cli_command_fn body)
{
    fm_cli_args args = {0};
    g_autofree char *message = NULL;
    int code;
    if (!fm_cli_parse(argc, argv, table, n, NULL, &args, &message))
        code = fm_cli_fail(FM_EXIT_USAGE, "%s: %s", command, message);
    else if (help && fm_cli_has(&args, "help")) {
        help();
        code = FM_EXIT_OK;
    } else if (help && args.positional->len > 0)
        code = fm_cli_fail(FM_EXIT_USAGE, _("%s: unexpected argument '%s'"), command,
                           (const char *)args.positional->pdata[0]);
    else
        code = body(&args);
    fm_cli_args_clear(&args);
    return code;
}

int fm_cli_parse_and_run(int argc, char **argv, const char *command, const fm_cli_option *table,
                         int n, fm_cli_command_fn body)
{
    return parse_and_run(argc, argv, command, table, n, NULL, body);
}

int fm_cli_parse_and_run_options(int argc, char **argv, const char *command,
                                 const fm_cli_option *table, int n, void (*help)(void),
                                 fm_cli_command_fn body)
{
    return parse_and_run(argc, argv, command, table, n, help, body);
}
