/* `fluxmap-cli batch -o RUN/ METHOD [--PARAM=VALUE...] FILES-or-FOLDERS...` (or a MANIFEST): a
 * folder of exams to maps in one command. It plans, runs the batch on this machine and merges it
 * into the catalogue; with --slurm it plans and submits the job array and its merge job instead.
 * Each step is the sub-command's own (plan, run, merge, submit), with the options that are its. */
#include <glib/gi18n.h>
#include <string.h>

#include "app/cli/cli-batch.h"
#include "app/cli/cli.h"

/* Options for the steps after the plan: (name, takes a value, a Slurm submission's only). */
static const struct {
    const char *name;
    gboolean value, slurm_only;
} later_options[] = {
    {"slurm", FALSE, TRUE},    {"gpus_per_task", TRUE, TRUE}, {"array_limit", TRUE, TRUE},
    {"partition", TRUE, TRUE}, {"account", TRUE, TRUE},       {"time", TRUE, TRUE},
    {"dry_run", FALSE, TRUE},  {"ntasks", TRUE, TRUE},        {"catalogue", TRUE, FALSE},
    {"json", FALSE, FALSE},    {"sequential", FALSE, FALSE},
};

typedef struct {
    GPtrArray *plan;  /* the plan's arguments */
    GPtrArray *later; /* "--name=value" for the later steps */
    const char *run_dir, *backend;
    const char *slurm_only; /* a Slurm-only option given (its name) */
    gboolean slurm;
} split_args;

static int later_index(const char *arg, char **value)
{
    const char *eq = strchr(arg + 2, '=');
    g_autofree char *name = eq ? g_strndup(arg + 2, eq - (arg + 2)) : g_strdup(arg + 2);
    g_strdelimit(name, "-", '_');
    *value = eq ? g_strdup(eq + 1) : NULL;
    for (guint k = 0; k < G_N_ELEMENTS(later_options); k++)
        if (strcmp(name, later_options[k].name) == 0)
            return (int)k;
    g_clear_pointer(value, g_free);
    return -1;
}

/* Sorts argv into the plan's arguments and the later steps' options; FALSE with the exit code
 * printed when an option lacks its value. */
static gboolean split(int argc, char **argv, split_args *s, int *code)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        char *value = NULL;
        int k = g_str_has_prefix(arg, "--") ? later_index(arg, &value) : -1;
        if (k < 0) { /* the plan's: -o RUN/, --backend, --skip-bad, METHOD, --PARAM, files */
            g_ptr_array_add(s->plan, g_strdup(arg));
            if ((strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) && i + 1 < argc)
                g_ptr_array_add(s->plan, g_strdup(s->run_dir = argv[++i]));
            else if (g_str_has_prefix(arg, "--output="))
                s->run_dir = arg + strlen("--output=");
            else if (g_str_has_prefix(arg, "-o") && arg[2] != '\0')
                s->run_dir = arg + 2;
            else if (g_str_has_prefix(arg, "--backend="))
                s->backend = arg + strlen("--backend=");
            else if (strcmp(arg, "--backend") == 0 && i + 1 < argc)
                g_ptr_array_add(s->plan, g_strdup(s->backend = argv[++i]));
            continue;
        }
        if (later_options[k].value && value == NULL) {
            if (i + 1 >= argc) {
                *code = fm_cli_fail(FM_EXIT_USAGE, _("batch: option '%s' needs a value"), arg);
                return FALSE;
            }
            value = g_strdup(argv[++i]);
        }
        const char *name = later_options[k].name;
        s->slurm |= strcmp(name, "slurm") == 0;
        g_autofree char *flag = g_strdup(name);
        g_strdelimit(flag, "_", '-');
        if (later_options[k].slurm_only && strcmp(name, "slurm") != 0)
            s->slurm_only = g_intern_string(flag);
        g_ptr_array_add(s->later, value ? g_strdup_printf("--%s=%s", flag, value)
                                        : g_strdup_printf("--%s", flag));
        g_free(value);
    }
    g_ptr_array_add(s->plan, NULL);
    return TRUE;
}

/* Runs a step with argv (NULL-terminated). */
static int step(int (*fn)(int, char **), GPtrArray *argv)
{
    g_ptr_array_add(argv, NULL);
    return fn((int)argv->len - 1, (char **)argv->pdata);
}

/* The later options the step takes (by name), after its first arguments. */
static GPtrArray *step_args(const split_args *s, const char *const *first, const char *const *take)
{
    GPtrArray *argv = g_ptr_array_new();
    for (int i = 0; first[i]; i++)
        g_ptr_array_add(argv, (gpointer)first[i]);
    for (guint i = 0; i < s->later->len; i++)
        for (int k = 0; take[k]; k++)
            if (g_str_has_prefix(s->later->pdata[i], take[k]))
                g_ptr_array_add(argv, s->later->pdata[i]);
    return argv;
}

/* The steps after a plan: submit (--slurm), or run here and merge into the catalogue. */
static int after_plan(const split_args *s)
{
    g_autofree char *backend = s->backend ? g_strdup_printf("--backend=%s", s->backend) : NULL;
    if (s->slurm) {
        const char *first[] = {s->run_dir, NULL};
        const char *take[] = {
            "--slurm",   "--gpus-per-task", "--array-limit", "--partition", "--account", "--time",
            "--dry-run", "--ntasks",        "--catalogue",   "--json",      NULL};
        g_autoptr(GPtrArray) submit = step_args(s, first, take);
        if (backend)
            g_ptr_array_add(submit, backend);
        return step(fm_cli_batch_submit, submit);
    }
    const char *run_first[] = {"run", s->run_dir, NULL};
    const char *run_take[] = {"--json", "--sequential", NULL};
    g_autoptr(GPtrArray) run = step_args(s, run_first, run_take);
    if (backend)
        g_ptr_array_add(run, backend);
    int code = step(fm_cli_batch, run);
    /* interrupted (130): what ran is in the shard, and goes into the catalogue all the same */
    if (code != FM_EXIT_OK && code != 130)
        return code;
    const char *merge_first[] = {"merge", s->run_dir, NULL};
    const char *merge_take[] = {"--catalogue", "--json", NULL};
    g_autoptr(GPtrArray) merge = step_args(s, merge_first, merge_take);
    int merged = step(fm_cli_batch, merge);
    return code != FM_EXIT_OK ? code : merged;
}

int fm_cli_batch_all(int argc, char **argv)
{
    split_args s = {.plan = g_ptr_array_new_with_free_func(g_free),
                    .later = g_ptr_array_new_with_free_func(g_free)};
    int code = FM_EXIT_OK;
    if (split(argc, argv, &s, &code)) {
        if (s.slurm_only && !s.slurm)
            code = fm_cli_fail(FM_EXIT_USAGE, _("batch: --%s is for a Slurm submission (--slurm)"),
                               s.slurm_only);
        else if ((code = fm_cli_batch_plan((int)s.plan->len - 1, (char **)s.plan->pdata, FALSE)) ==
                     FM_EXIT_OK &&
                 s.run_dir != NULL)
            code = after_plan(&s);
    }
    g_ptr_array_unref(s.plan);
    g_ptr_array_unref(s.later);
    return code;
}
