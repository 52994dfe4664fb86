/* Shared by the fluxmap-cli test programs: running the binary, temporary paths, JSON parsing. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdarg.h>

/* The fluxmap-cli binary ($FLUXMAP_CLI) and the test's temporary folder, set by
 * cli_test_init. */
extern const char *cli_path;
extern char *tmp_dir;

typedef struct {
    int status;
    char *out, *err;
} cli_result;

void cli_result_clear(cli_result *r);

/* Reads $FLUXMAP_CLI and makes a temporary folder from tmp_template; FALSE when it is unset
 * (the caller says so in its own way). */
gboolean cli_test_init(const char *tmp_template);
/* Removes the temporary folder and returns status. */
int cli_test_finish(int status);

/* Runs fluxmap-cli in cwd (NULL: ours) with envp (NULL: ours) and the NULL-terminated
 * arguments first, ...; asserts it exited normally (a crash is never acceptable). */
cli_result cli_test_runv(const char *cwd, char **envp, const char *first, va_list ap);
cli_result cli_test_run(const char *cwd, char **envp, const char *first,
                        ...) G_GNUC_NULL_TERMINATED;

/* tmp_dir/name; g_free it. */
char *cli_test_tmp_path(const char *name);

/* Parses text, asserting that it is a JSON object; *parser_out keeps it alive (unref it). */
JsonObject *cli_test_parse_object(const char *text, JsonParser **parser_out);
