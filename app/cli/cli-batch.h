/* fluxmap-cli batch: its sub-commands, for main.c and for the one-command form. */
#pragma once

#include <glib.h>

/* batch plan|run|merge|submit ..., or the one-command form (cli-batch-all.c). */
int fm_cli_batch(int argc, char **argv);
/* batch plan's arguments (after "plan"); hint: print how to run the planned batch. */
int fm_cli_batch_plan(int argc, char **argv, gboolean hint);
/* batch submit's arguments (after "submit"): app/cli/cli-batch-submit.c. */
int fm_cli_batch_submit(int argc, char **argv);
/* batch -o RUN/ METHOD|MANIFEST ...: plan, run and merge (or plan and submit with --slurm). */
int fm_cli_batch_all(int argc, char **argv);
