/* `fluxmap-cli batch submit RUN/ --slurm`: a batch folder as a Slurm job array (one task per
 * array index, each `batch run RUN/ --task I --ntasks N`) and a merge job that waits for the
 * array; the scripts are written to RUN/slurm/ and submitted with sbatch. */
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "app/core/batch/batch_merge.h"
#include "app/core/batch/batch_plan.h"
#include "kernels/device.h"

/* Slurm's default MaxArraySize is 1001 (indices 0..1000). */
#define FM_SLURM_DEFAULT_MAX_TASKS 1000

static const fm_cli_option options[] = {
    {"slurm", FALSE},  {"gpus_per_task", TRUE}, {"array_limit", TRUE}, {"dry_run", FALSE},
    {"tasks", TRUE},   {"ntasks", TRUE},        {"partition", TRUE},   {"account", TRUE},
    {"time", TRUE},    {"catalogue", TRUE},     {"json", FALSE},       {"help", FALSE},
    {"backend", TRUE},
};

static void print_help(void)
{
    printf("%s",
           _("Usage: fluxmap-cli batch submit RUN/ --slurm [--gpus-per-task G] [--array-limit K]\n"
             "    [--ntasks N] [--tasks LIST] [--partition P] [--account A] [--time T]\n"
             "    [--backend=auto|cpu|cuda] [--catalogue PATH] [--dry-run] [--json]\n"
             "Writes RUN/slurm/array.sbatch, a Slurm job array whose task I runs\n"
             "'fluxmap-cli batch run RUN/ --task I --ntasks N', and RUN/slurm/merge.sbatch,\n"
             "'fluxmap-cli batch merge RUN/' once every task has ended (afterany), submits both\n"
             "with sbatch and prints their job ids. Task logs are RUN/slurm/task-I-JOB.log.\n"
             "  --ntasks N         tasks in all (item i is task i mod N); default one per item\n"
             "                     of the plan, at most 1000; a later submit keeps the first N\n"
             "  --tasks LIST       only these task indices, as merge prints them (1,4-5)\n"
             "  --gpus-per-task G  --gres=gpu:G for each task (CUDA sees the GPUs Slurm gives)\n"
             "  --backend B        the tasks' backend: default auto with GPUs, else cpu (a\n"
             "                     task never takes a GPU Slurm did not give it)\n"
             "  --array-limit K    at most K tasks at a time (--array=...%K)\n"
             "  --dry-run          print the scripts; submit nothing\n"
             "sbatch also takes SBATCH_* environment variables (SBATCH_QOS, ...).\n"));
}

/* The submission's settings, from the command line and the batch folder. */
typedef struct {
    char *run_dir;   /* absolute */
    char *slurm_dir; /* RUN/slurm */
    char *cli_path;  /* this fluxmap-cli, so the tasks run the same build */
    int ntasks;
    char *tasks; /* --array's index list: "0-5" or "1,4-5" */
    int gpus_per_task, array_limit;
    const char *backend; /* batch run's --backend, NULL for its default (auto) */
} submit_setup;

static void submit_setup_clear(submit_setup *s)
{
    g_free(s->run_dir);
    g_free(s->slurm_dir);
    g_free(s->cli_path);
    g_free(s->tasks);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(submit_setup, submit_setup_clear)

/* Items in the batch's plan (RUN/plan.tsv); -1 with error when it cannot be read. */
static int count_plan_items(const char *run_dir, GError **error)
{
    g_autoptr(fm_batch_plan) plan = fm_batch_plan_load(run_dir, error);
    return plan ? (int)plan->items->len : -1;
}

/* Parses an --array index list ("1,4-5") into flags[0..n); FALSE with a message when an entry
 * is not a number, a range runs backwards or an index is n or more. */
static gboolean parse_task_list(const char *list, int n, gboolean *flags, char **message)
{
    g_auto(GStrv) parts = g_strsplit(list, ",", -1);
    int count = 0;
    for (int i = 0; parts[i]; i++) {
        char *end = NULL;
        const char *part = g_strstrip(parts[i]);
        long first = strtol(part, &end, 10), last = first;
        if (end != part && *end == '-') {
            const char *second = end + 1;
            last = strtol(second, &end, 10);
            if (end == second)
                end = NULL;
        }
        if (!*part || !end || end == part || *end || first < 0 || last < first) {
            *message =
                g_strdup_printf(_("--tasks: '%s' is not a task index or range (1,4-5)"), part);
            return FALSE;
        }
        if (last >= n) {
            *message = g_strdup_printf(_("--tasks: task %ld is beyond the batch's %d tasks "
                                         "(0 to %d)"),
                                       last, n, n - 1);
            return FALSE;
        }
        for (long t = first; t <= last; t++)
            flags[t] = TRUE;
        count++;
    }
    if (count == 0) {
        *message = g_strdup(_("--tasks: no task given"));
        return FALSE;
    }
    return TRUE;
}

/* flags as --array takes it ("0-5", "1,4-5"). */
static char *format_task_list(const gboolean *flags, int n)
{
    g_autoptr(GArray) indices = g_array_new(FALSE, FALSE, sizeof(int));
    for (int t = 0; t < n; t++)
        if (flags[t])
            g_array_append_val(indices, t);
    return fm_batch_array_ranges(indices);
}

/* RUN/slurm/ntasks holds the N of the first submission, so that resubmitting a few tasks
 * splits the items as the shards already written do. */
static int read_recorded_ntasks(const char *slurm_dir)
{
    g_autofree char *path = g_build_filename(slurm_dir, "ntasks", NULL);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return 0;
    return atoi(text);
}

static int resolve_setup(const fm_cli_args *args, submit_setup *s)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *message = NULL;
    const char *run = g_ptr_array_index(args->positional, 0);
    s->run_dir = g_canonicalize_filename(run, NULL);
    if (!g_file_test(s->run_dir, G_FILE_TEST_IS_DIR))
        return fm_cli_fail(FM_EXIT_INPUT, _("batch submit: %s is not a folder"), run);
    s->slurm_dir = g_build_filename(s->run_dir, "slurm", NULL);
    s->cli_path = g_file_read_link("/proc/self/exe", NULL);
    if (!s->cli_path)
        s->cli_path = g_strdup("fluxmap-cli");

    if (!fm_cli_get_int(args, "gpus_per_task", &s->gpus_per_task, &message) ||
        !fm_cli_get_int(args, "array_limit", &s->array_limit, &message) ||
        !fm_cli_get_positive_int(args, "ntasks", &s->ntasks, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "batch submit: %s", message);
    fm_backend backend = FM_BACKEND_AUTO;
    s->backend = fm_cli_get(args, "backend");
    if (s->backend && fm_backend_parse(s->backend, &backend) != FM_OK)
        return fm_cli_fail(FM_EXIT_USAGE, _("--backend: '%s' is not one of auto, cpu, cuda"),
                           s->backend);
    if (!s->backend && s->gpus_per_task == 0)
        s->backend = "cpu"; /* a GPU node's GPUs belong to the jobs Slurm gave them to */
    if (s->gpus_per_task < 0 || s->array_limit < 0)
        return fm_cli_fail(FM_EXIT_USAGE, _("batch submit: --gpus-per-task and --array-limit "
                                            "take 0 or more"));

    int items = count_plan_items(s->run_dir, &error);
    if (items < 0)
        return fm_cli_fail(FM_EXIT_INPUT,
                           _("batch submit: %s (write the batch with 'fluxmap-cli batch plan')"),
                           error->message);
    if (items == 0)
        return fm_cli_fail(FM_EXIT_INPUT, _("batch submit: %s/plan.tsv holds no items"),
                           s->run_dir);
    int recorded = read_recorded_ntasks(s->slurm_dir);
    if (fm_cli_has(args, "tasks") && recorded > 0) {
        if (s->ntasks > 0 && s->ntasks != recorded)
            return fm_cli_fail(FM_EXIT_USAGE,
                               _("batch submit: --ntasks %d differs from the %d tasks the batch "
                                 "was first submitted as (%s/ntasks)"),
                               s->ntasks, recorded, s->slurm_dir);
        s->ntasks = recorded;
    }
    if (s->ntasks == 0)
        s->ntasks = MIN(items, FM_SLURM_DEFAULT_MAX_TASKS);
    else if (s->ntasks > items && recorded != s->ntasks)
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("batch submit: --ntasks %d is more than the plan's %d items"),
                           s->ntasks, items);

    g_autofree gboolean *flags = g_new0(gboolean, s->ntasks);
    if (fm_cli_has(args, "tasks")) {
        if (!parse_task_list(fm_cli_get(args, "tasks"), s->ntasks, flags, &message))
            return fm_cli_fail(FM_EXIT_USAGE, "batch submit: %s", message);
    } else {
        for (int t = 0; t < s->ntasks; t++)
            flags[t] = TRUE;
    }
    s->tasks = format_task_list(flags, s->ntasks);
    return FM_EXIT_OK;
}

/* An --output directive: the folder's own '%' doubled (Slurm would expand "%x" in it) and the
 * whole in double quotes (sbatch splits a directive at spaces otherwise). */
static void add_output(GString *script, const char *dir, const char *pattern)
{
    g_auto(GStrv) parts = g_strsplit(dir, "%", -1);
    g_autofree char *escaped = g_strjoinv("%%", parts);
    g_string_append_printf(script, "#SBATCH --output=\"%s/%s\"\n", escaped, pattern);
}

/* A job name of the batch folder's name, in letters, digits, '.', '_' and '-' only. */
static char *job_name(const char *prefix, const char *run_dir)
{
    g_autofree char *base = g_path_get_basename(run_dir);
    g_strcanon(base, G_CSET_A_2_Z G_CSET_a_2_z G_CSET_DIGITS "._-", '_');
    return g_strconcat(prefix, base, NULL);
}

static void add_directive(GString *script, const char *option, const char *value)
{
    if (value)
        g_string_append_printf(script, "#SBATCH --%s=%s\n", option, value);
}

/* The directives both scripts share: the account, partition and time the user gave. */
static void add_common_directives(GString *script, const fm_cli_args *args)
{
    add_directive(script, "partition", fm_cli_get(args, "partition"));
    add_directive(script, "account", fm_cli_get(args, "account"));
    add_directive(script, "time", fm_cli_get(args, "time"));
}

static char *array_script(const submit_setup *s, const fm_cli_args *args)
{
    GString *script = g_string_new("#!/bin/sh\n");
    g_autofree char *name = job_name("fluxmap-", s->run_dir);
    g_autofree char *cli = g_shell_quote(s->cli_path);
    g_autofree char *run = g_shell_quote(s->run_dir);
    g_string_append_printf(script,
                           "# Fluxmap batch %s: array task I runs task I of %d (written by "
                           "fluxmap-cli batch submit)\n",
                           s->run_dir, s->ntasks);
    g_string_append_printf(script, "#SBATCH --job-name=%s\n", name);
    if (s->array_limit > 0)
        g_string_append_printf(script, "#SBATCH --array=%s%%%d\n", s->tasks, s->array_limit);
    else
        g_string_append_printf(script, "#SBATCH --array=%s\n", s->tasks);
    /* %a the task, %A the array job: a resubmitted task keeps the earlier log beside its own */
    add_output(script, s->slurm_dir, "task-%a-%A.log");
    if (s->gpus_per_task > 0)
        g_string_append_printf(script, "#SBATCH --gres=gpu:%d\n", s->gpus_per_task);
    add_common_directives(script, args);
    /* --ntasks is N itself, not SLURM_ARRAY_TASK_COUNT: a resubmitted array holds fewer tasks */
    g_string_append_printf(script,
                           "exec %s batch run %s --task \"$SLURM_ARRAY_TASK_ID\" --ntasks %d", cli,
                           run, s->ntasks);
    if (s->backend)
        g_string_append_printf(script, " --backend=%s", s->backend);
    g_string_append(script, "\n");
    return g_string_free(script, FALSE);
}

static char *merge_script(const submit_setup *s, const fm_cli_args *args, const char *array_job)
{
    GString *script = g_string_new("#!/bin/sh\n");
    g_autofree char *name = job_name("fluxmap-merge-", s->run_dir);
    g_autofree char *cli = g_shell_quote(s->cli_path);
    g_autofree char *run = g_shell_quote(s->run_dir);
    g_string_append_printf(script,
                           "# Fluxmap batch %s: merges the tasks' shards into the catalogue once "
                           "the array has ended, whether or not every task succeeded\n",
                           s->run_dir);
    g_string_append_printf(script, "#SBATCH --job-name=%s\n", name);
    g_string_append_printf(script, "#SBATCH --dependency=afterany:%s\n", array_job);
    add_output(script, s->slurm_dir, "merge-%j.log");
    add_common_directives(script, args);
    /* --ntasks: the missing tasks counted in N even where no task wrote its shard */
    g_string_append_printf(script, "exec %s batch merge %s --ntasks %d", cli, run, s->ntasks);
    const char *catalogue = fm_cli_get(args, "catalogue");
    if (catalogue) {
        g_autofree char *absolute = g_canonicalize_filename(catalogue, NULL);
        g_autofree char *quoted = g_shell_quote(absolute);
        g_string_append_printf(script, " --catalogue %s", quoted);
    }
    g_string_append(script, "\n");
    return g_string_free(script, FALSE);
}

static gboolean write_script(const char *path, const char *text, GError **error)
{
    if (!g_file_set_contents(path, text, -1, error))
        return FALSE;
    g_chmod(path, 0755);
    return TRUE;
}

/* Runs `sbatch --parsable SCRIPT` in RUN/slurm/; returns the job id (g_free it) or NULL with
 * sbatch's own message. */
static char *sbatch(const char *slurm_dir, const char *script, GError **error)
{
    const char *argv[] = {"sbatch", "--parsable", script, NULL};
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    if (!g_spawn_sync(slurm_dir, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                      &status, error)) {
        g_prefix_error(error, _("sbatch (is Slurm's client on PATH?): "));
        return NULL;
    }
    if (!g_spawn_check_wait_status(status, NULL)) {
        g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, _("sbatch %s failed: %s"), script,
                    err && *err ? g_strstrip(err) : _("no message"));
        return NULL;
    }
    /* --parsable prints "ID" or "ID;CLUSTER" */
    char *id = g_strstrip(g_strdup(out ? out : ""));
    char *semicolon = strchr(id, ';');
    if (semicolon)
        *semicolon = '\0';
    if (!*id || !g_ascii_isdigit(*id)) {
        g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED,
                    _("sbatch %s printed no job id ('%s')"), script, out ? out : "");
        g_free(id);
        return NULL;
    }
    return id;
}

static void print_result(const submit_setup *s, const fm_cli_args *args, const char *array_job,
                         const char *merge_job)
{
    if (fm_cli_has(args, "json")) {
        g_autoptr(JsonBuilder) builder = json_builder_new();
        json_builder_begin_object(builder);
        fm_cli_json_member_int(builder, "array_job", g_ascii_strtoll(array_job, NULL, 10));
        fm_cli_json_member_int(builder, "merge_job", g_ascii_strtoll(merge_job, NULL, 10));
        fm_cli_json_member_string(builder, "tasks", s->tasks);
        fm_cli_json_member_int(builder, "ntasks", s->ntasks);
        fm_cli_json_member_string(builder, "logs", s->slurm_dir);
        json_builder_end_object(builder);
        fm_cli_json_print(builder);
        return;
    }
    printf(_("array job %s: tasks %s of %d"), array_job, s->tasks, s->ntasks);
    if (s->array_limit > 0)
        printf(_(", at most %d at a time"), s->array_limit);
    printf("\n");
    printf(_("merge job %s: after the array ends\n"), merge_job);
    printf(_("logs: %s/\n"), s->slurm_dir);
}

static int submit(const fm_cli_args *args)
{
    if (fm_cli_has(args, "help")) {
        print_help();
        return FM_EXIT_OK;
    }
    if (args->positional->len != 1)
        return fm_cli_fail(FM_EXIT_USAGE, _("batch submit: give one batch folder (RUN/)"));
    if (!fm_cli_has(args, "slurm"))
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("batch submit: name the scheduler: --slurm (the only one so far)"));
    g_auto(submit_setup) s = {0};
    int code = resolve_setup(args, &s);
    if (code != FM_EXIT_OK)
        return code;

    g_autofree char *array_text = array_script(&s, args);
    if (fm_cli_has(args, "dry_run")) {
        g_autofree char *merge_text = merge_script(&s, args, "<array job id>");
        printf("# %s/array.sbatch\n%s\n# %s/merge.sbatch\n%s", s.slurm_dir, array_text, s.slurm_dir,
               merge_text);
        return FM_EXIT_OK;
    }

    g_autoptr(GError) error = NULL;
    g_autofree char *array_path = g_build_filename(s.slurm_dir, "array.sbatch", NULL);
    g_autofree char *merge_path = g_build_filename(s.slurm_dir, "merge.sbatch", NULL);
    g_autofree char *ntasks_path = g_build_filename(s.slurm_dir, "ntasks", NULL);
    g_autofree char *ntasks_text = g_strdup_printf("%d\n", s.ntasks);
    if (g_mkdir_with_parents(s.slurm_dir, 0755) != 0)
        return fm_cli_fail(FM_EXIT_INPUT, _("batch submit: cannot create %s"), s.slurm_dir);
    if (!write_script(array_path, array_text, &error) ||
        !g_file_set_contents(ntasks_path, ntasks_text, -1, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "batch submit: %s", error->message);
    g_autofree char *array_job = sbatch(s.slurm_dir, array_path, &error);
    if (!array_job)
        return fm_cli_fail(FM_EXIT_COMPUTE, "batch submit: %s", error->message);

    /* the merge names the array's id, known only now */
    g_autofree char *merge_text = merge_script(&s, args, array_job);
    if (!write_script(merge_path, merge_text, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "batch submit: %s (array job %s is submitted)",
                           error->message, array_job);
    g_autofree char *merge_job = sbatch(s.slurm_dir, merge_path, &error);
    if (!merge_job)
        return fm_cli_fail(FM_EXIT_COMPUTE,
                           "batch submit: %s (array job %s is submitted; merge later with "
                           "'fluxmap-cli batch merge %s')",
                           error->message, array_job, s.run_dir);
    print_result(&s, args, array_job, merge_job);
    return FM_EXIT_OK;
}

int fm_cli_batch_submit(int argc, char **argv)
{
    return fm_cli_parse_and_run(argc, argv, "batch submit", options, G_N_ELEMENTS(options), submit);
}
