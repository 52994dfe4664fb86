/* "METHOD [--PARAM=VALUE...] ... [--backend=auto|cpu|cuda]" as `run` and `live` take it
 * (app/cli/cli-method-args.c): the method, its parameters from its schema, the backend. */
#pragma once

#include "app/cli/cli.h"
#include "app/core/method.h"

G_BEGIN_DECLS

/* argv[0] is METHOD; the rest is parsed against table (n entries, which must hold "backend"
 * and "help") plus the method's schema keys and the ROI options. Returns FM_EXIT_OK, an exit
 * code (message printed: command names the sub-command), or -1 after calling help for --help. */
int fm_cli_parse_method_args(int argc, char **argv, const char *command, const fm_cli_option *table,
                             int n, void (*help)(void), fm_cli_args *args, const fm_method **method,
                             fm_params **params, fm_backend *backend);

/* A method command (`run`, `live`): parse as fm_cli_parse_method_args plus the command's own
 * checks; execute what was parsed. */
typedef int (*fm_cli_method_parse_fn)(int argc, char **argv, fm_cli_args *args,
                                      const fm_method **method, fm_params **params,
                                      fm_backend *backend);
typedef int (*fm_cli_method_execute_fn)(const fm_method *method, const fm_params *params,
                                        fm_backend backend, const fm_cli_args *args);

/* Parses, then executes when the arguments were good: the exit code (FM_EXIT_OK after --help). */
int fm_cli_method_command(int argc, char **argv, fm_cli_method_parse_fn parse,
                          fm_cli_method_execute_fn execute);

G_END_DECLS
