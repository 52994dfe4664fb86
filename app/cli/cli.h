/* Shared pieces of fluxmap-cli: exit codes, error reporting, option parsing, JSON output. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "app/core/result.h"

G_BEGIN_DECLS

enum {
    FM_EXIT_OK = 0,
    FM_EXIT_USAGE = 2,   /* bad usage or parameters */
    FM_EXIT_INPUT = 3,   /* unreadable or invalid input file */
    FM_EXIT_COMPUTE = 4, /* compute or device failure */
};

/* Prints "fluxmap-cli: <message>" to stderr and returns code, for `return fm_cli_fail(...)`. */
int fm_cli_fail(int code, const char *format, ...) G_GNUC_PRINTF(2, 3);
/* Exit code for an FM_ERROR (2 parameters, 3 input/IO/catalogue, 4 compute/device). */
int fm_cli_exit_code(const GError *error);
/* Prints the error's message and returns its exit code. */
int fm_cli_fail_error(const GError *error);

/* One accepted option: name without dashes, in snake_case ("no_catalogue"). */
typedef struct {
    const char *name;
    gboolean has_value;
} fm_cli_option;

/* Parsed command line: options (name -> value, "" for flags; "-o" is "output", "-h" is
 * "help"; dashes inside names read as underscores) and positional arguments. */
typedef struct {
    GHashTable *options;
    GPtrArray *positional;
} fm_cli_args;

void fm_cli_args_clear(fm_cli_args *args);
/* Parses argv[0..argc) against the options in table (n entries) plus extra (a table of
 * name -> GINT_TO_POINTER(has_value), may be NULL). Unknown options, a missing value or a
 * stray "-x" set a message in *message (g_free it) and return FALSE. */
gboolean fm_cli_parse(int argc, char **argv, const fm_cli_option *table, int n, GHashTable *extra,
                      fm_cli_args *args, char **message);
const char *fm_cli_get(const fm_cli_args *args, const char *name);
gboolean fm_cli_has(const fm_cli_args *args, const char *name);

/* Adds a number to a JSON builder, or null when it is NaN or infinite (JSON has neither). */
void fm_cli_json_add_number(JsonBuilder *builder, double value);
/* Adds "min","max","mean","median","valid_pixels" members. */
void fm_cli_json_add_stats(JsonBuilder *builder, const fm_map_stats *stats);
/* Adds a parsed JSON text as a value (null when it does not parse). */
void fm_cli_json_add_parsed(JsonBuilder *builder, const char *json);
/* Prints the builder's root, pretty, followed by a newline, to stdout. */
void fm_cli_json_print(JsonBuilder *builder);

int fm_cli_methods(int argc, char **argv);
int fm_cli_run(int argc, char **argv);
int fm_cli_simulate(int argc, char **argv);
int fm_cli_catalogue(int argc, char **argv);

G_END_DECLS
