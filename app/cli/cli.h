/* Shared pieces of fluxmap-cli: exit codes, error reporting, option parsing, JSON output. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include "app/core/stages.h"

#include "app/core/catalogue.h"
#include "app/core/params.h"
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
/* Object members: name then value (a number as fm_cli_json_add_number; a NULL string as null). */
void fm_cli_json_member_number(JsonBuilder *builder, const char *name, double value);
void fm_cli_json_member_int(JsonBuilder *builder, const char *name, gint64 value);
void fm_cli_json_member_string(JsonBuilder *builder, const char *name, const char *value);
/* A catalogue run ID, or null for none (run_id <= 0, e.g. --no-catalogue). */
void fm_cli_json_member_run_id(JsonBuilder *builder, gint64 run_id);
/* Writes the builder's root, pretty, to path with fm_json_to_text's valid JSON numbers; the
 * error is GLib's file error, without the path prefix fm_json_to_file adds. */
gboolean fm_cli_json_write_file(JsonBuilder *builder, const char *path, GError **error);

/* An output file's stem, the name its sidecars (FILE.truth.json, ...) take: output without the
 * first of the NULL-terminated exts it ends with (g_free it); *which (may be NULL) gets that
 * extension's index, or -1 when none matched and the stem is output itself. */
char *fm_cli_output_stem(const char *output, const char *const *exts, int *which);

/* Option values (app/cli/cli-options.c). Each leaves *out alone when the option is absent and
 * returns TRUE; a malformed value sets a "--name: 'text' is not ..." message (g_free it). */
gboolean fm_cli_get_int(const fm_cli_args *args, const char *name, int *out, char **message);
/* Like fm_cli_get_int, for values that must be 1 or more. */
gboolean fm_cli_get_positive_int(const fm_cli_args *args, const char *name, int *out,
                                 char **message);
/* A finite number. */
gboolean fm_cli_get_double(const fm_cli_args *args, const char *name, double *out, char **message);
/* --seed as an unsigned 64-bit integer. */
gboolean fm_cli_get_seed(const fm_cli_args *args, guint64 *out, char **message);

/* --block N / --channel N (app/cli/cli-part.c): the part of INPUT to read (for
 * fm_dataset_open_part), 0 when neither is given; an exit code other than FM_EXIT_OK (printed)
 * for a malformed value or one that does not apply to the file. */
int fm_cli_input_part(const fm_cli_args *args, const char *input, int *part);

/* Body of a sub-command, called with its parsed options. */
typedef int (*fm_cli_command_fn)(const fm_cli_args *args);
/* Parses argv against table and runs body; a parse error is "<command>: <message>", exit 2. */
int fm_cli_parse_and_run(int argc, char **argv, const char *command, const fm_cli_option *table,
                         int n, fm_cli_command_fn body);
/* As fm_cli_parse_and_run for commands without positional arguments: --help calls help and
 * exits 0, a positional argument is "<command>: unexpected argument '<arg>'", exit 2. */
int fm_cli_parse_and_run_options(int argc, char **argv, const char *command,
                                 const fm_cli_option *table, int n, void (*help)(void),
                                 fm_cli_command_fn body);

/* A catalogue record of one CLI run (app/cli/cli-record.c), so that `run` and `mcml run` record
 * alike; with --no-catalogue nothing is opened and every call does nothing. */
typedef struct {
    fm_catalogue *catalogue;
    gint64 run_id; /* 0 when not recorded */
} fm_cli_record;

void fm_cli_record_clear(fm_cli_record *record);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(fm_cli_record, fm_cli_record_clear)
/* Opens the catalogue and begins a run unless --no-catalogue; exit 3 "catalogue: ..." on error,
 * else FM_EXIT_OK. */
int fm_cli_record_begin(fm_cli_record *record, const fm_cli_args *args, const fm_dataset *dataset,
                        const char *method_id, const fm_params *params, GPtrArray *rois);
/* Marks the run failed (or cancelled, for FM_ERROR_CANCELLED) with the error's message. */
void fm_cli_record_abort(fm_cli_record *record, const GError *error);
/* Ends the run after writing the outputs: code != FM_EXIT_OK marks it failed with
 * failure_message; otherwise it is finished with the result. Returns code, or 3 when finishing
 * the record fails. */
int fm_cli_record_end(fm_cli_record *record, int code, const fm_result *result,
                      const char *failure_message);
/* The same when the maps are written (files[i]) and summarised (stats[i]) already: the catalogue
 * copies the files instead of encoding the maps again. */
int fm_cli_record_end_with(fm_cli_record *record, int code, const fm_result *result,
                           const char *const *files, const fm_map_stats *stats,
                           const char *failure_message);

/* --profile (app/cli/cli-profile.c): where a run's wall time went, and its peak memory. */
typedef struct {
    fm_stage_times stages;
    double wall_ms;               /* from the start of the command to its output */
    double device_start_total_ms; /* the CUDA start's own duration, mostly hidden by the read */
    double input_mb, outputs_mb;  /* the dataset in memory, the maps in memory */
    double peak_rss_mb;           /* the process's peak resident memory (getrusage) */
} fm_cli_profile;

/* Fills input_mb, outputs_mb and peak_rss_mb; dataset and result may be NULL. */
void fm_cli_profile_measure(fm_cli_profile *profile, const fm_dataset *dataset,
                            const fm_result *result);
/* A "profile" member: wall_ms, stages {read: ms, ...}, other_ms, memory figures. */
void fm_cli_json_member_profile(JsonBuilder *builder, const fm_cli_profile *profile);
/* The same as text lines on stdout. */
void fm_cli_print_profile(const fm_cli_profile *profile);

int fm_cli_methods(int argc, char **argv);
int fm_cli_run(int argc, char **argv);
int fm_cli_simulate(int argc, char **argv);
int fm_cli_catalogue(int argc, char **argv);
int fm_cli_info(int argc, char **argv); /* app/cli/cli-info.c */

G_END_DECLS
