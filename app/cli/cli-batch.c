/* `fluxmap-cli batch plan | run | merge`: one method over many files as a batch in RUN/, run as
 * tasks that each write a shard, merged into the catalogue. */
#include <glib/gi18n.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/cli-batch.h"
#include "app/cli/cli-method-args.h"
#include "app/cli/cli.h"
#include "app/core/batch/batch_merge.h"
#include "app/core/batch/batch_plan.h"
#include "app/core/batch/batch_task.h"
#include "app/core/catalogue.h"
#include "kernels/device.h"

static void print_help(void)
{
    printf("%s",
           _("Usage: fluxmap-cli batch -o RUN/ METHOD [--PARAM=VALUE...] FILES-or-FOLDERS...\n"
             "                  [--backend=B] [--catalogue DIR] [--slurm [submit's options]]\n"
             "       fluxmap-cli batch -o RUN/ MANIFEST.csv|MANIFEST.tsv [...]\n"
             "       fluxmap-cli batch plan -o RUN/ MANIFEST.csv|MANIFEST.tsv [--skip-bad]\n"
             "       fluxmap-cli batch plan -o RUN/ METHOD [--PARAM=VALUE...] [--roi FILE]\n"
             "                  FILES-or-FOLDERS... [--skip-bad]\n"
             "       fluxmap-cli batch run RUN/ [--task I --ntasks N] [--backend=auto|cpu|cuda]\n"
             "                  [--json] [--sequential] [--retry-failed]\n"
             "       fluxmap-cli batch merge RUN/ [--catalogue DIR] [--ntasks N] [--json]\n"
             "The first form does it all in one command: plan, run on this machine and\n"
             "merge into the catalogue; with --slurm, plan and submit (see 'batch submit\n"
             "--help'), the merge job filling the catalogue when the tasks end.\n"
             "plan checks every item before anything runs (the input's header as a reader\n"
             "sees it, the method, its parameters, the ROI file and its roles), lists each\n"
             "bad one with its file and the reason and exits 2 writing nothing, unless\n"
             "--skip-bad plans the others. A manifest has the columns input, method,\n"
             "params (key=value;key=value or a JSON object), roi, output (a header row\n"
             "names them; relative paths are the manifest's folder's). A folder's files\n"
             "that no reader takes for METHOD are skipped.\n"
             "run runs task I of N (item i is task i mod N's; default task 0 of 1) in one\n"
             "process: the device started once, reading, computing and writing items at\n"
             "the same time, into RUN/shards/task-I-of-N/, which appears when the task is\n"
             "complete. An item that fails is recorded as failed and the task goes on; a\n"
             "complete task is not run again, a killed one's partial shard is redone;\n"
             "--retry-failed runs a complete task's failed items again (their shard\n"
             "task-I-of-N.rR; the merge puts a done run in place of the failed one).\n"
             "Progress: a bar on a terminal, else one JSON line per item on stdout.\n"
             "--sequential runs the stages one after the other (to time them).\n"
             "merge copies the complete shards' runs and maps into the catalogue (default\n"
             "the user's; FLUXMAP_DATA_DIR), once: a second merge changes nothing. It\n"
             "prints the tasks still missing as Slurm's --array takes them and exits 1\n"
             "when there are any.\n"));
}

/* ---- plan ---- */

static const fm_cli_option plan_options[] = {
    {"output", TRUE}, {"skip_bad", FALSE}, {"help", FALSE}, {"backend", TRUE}, {"roi", TRUE},
};

static gboolean is_manifest(const char *arg)
{
    g_autofree char *lower = g_ascii_strdown(arg, -1);
    return (g_str_has_suffix(lower, ".csv") || g_str_has_suffix(lower, ".tsv")) &&
           fm_method_find(arg) == NULL;
}

int fm_cli_batch_plan(int argc, char **argv, gboolean hint)
{
    fm_cli_args args = {0};
    const fm_method *method = NULL;
    g_autoptr(fm_params) params = NULL;
    fm_backend backend;
    g_autofree char *message = NULL;
    int code = FM_EXIT_OK;
    gboolean manifest = argc > 0 && is_manifest(argv[0]);
    /* the manifest may come after -o RUN/ too */
    for (int i = 0; i < argc && !manifest; i++)
        manifest =
            argv[i][0] != '-' && is_manifest(argv[i]) && (i == 0 || strcmp(argv[i - 1], "-o") != 0);
    if (manifest) {
        if (!fm_cli_parse(argc, argv, plan_options, G_N_ELEMENTS(plan_options), NULL, &args,
                          &message))
            code = fm_cli_fail(FM_EXIT_USAGE, "batch plan: %s", message);
        else if (fm_cli_has(&args, "help")) {
            print_help();
            code = -1;
        } else if (args.positional->len != 1)
            code = fm_cli_fail(FM_EXIT_USAGE, _("batch plan: one MANIFEST, got %u arguments"),
                               args.positional->len);
    } else {
        /* METHOD may follow -o RUN/: it goes first, as fm_cli_parse_method_args takes it */
        g_autofree char **reordered = g_new0(char *, argc + 1);
        int at = -1;
        for (int i = 0; i < argc && at < 0; i++)
            if (fm_method_find(argv[i]) && (i == 0 || strcmp(argv[i - 1], "-o") != 0))
                at = i;
        reordered[0] = argv[at < 0 ? 0 : at];
        for (int i = 0, k = 1; i < argc && argc > 0; i++)
            if (i != (at < 0 ? 0 : at))
                reordered[k++] = argv[i];
        code = fm_cli_parse_method_args(argc, reordered, "batch plan", plan_options,
                                        G_N_ELEMENTS(plan_options), print_help, &args, &method,
                                        &params, &backend);
        if (code == FM_EXIT_OK && args.positional->len == 0)
            code = fm_cli_fail(FM_EXIT_USAGE, _("batch plan: no FILES or FOLDERS"));
    }
    const char *run_dir = code == FM_EXIT_OK ? fm_cli_get(&args, "output") : NULL;
    if (code == FM_EXIT_OK && (!run_dir || !*run_dir))
        code = fm_cli_fail(FM_EXIT_USAGE, _("batch plan: missing -o RUN/"));
    if (code != FM_EXIT_OK) { /* -1: the help was printed */
        fm_cli_args_clear(&args);
        return code < 0 ? FM_EXIT_OK : code;
    }
    g_autoptr(fm_batch_plan) plan = fm_batch_plan_new();
    g_autoptr(GPtrArray) problems =
        g_ptr_array_new_with_free_func((GDestroyNotify)fm_batch_problem_free);
    g_autoptr(GError) error = NULL;
    int skipped = 0;
    if (manifest) {
        if (!fm_batch_plan_add_manifest(plan, args.positional->pdata[0], problems, &error))
            code = fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);
    } else {
        g_autofree char *params_json = fm_params_to_json(params);
        fm_batch_plan_add_files(plan, method, params_json, fm_cli_get(&args, "roi"),
                                (const char *const *)args.positional->pdata,
                                (int)args.positional->len, problems, &skipped);
    }
    gboolean skip_bad = fm_cli_has(&args, "skip_bad");
    for (guint i = 0; code == FM_EXIT_OK && i < problems->len; i++) {
        const fm_batch_problem *p = problems->pdata[i];
        fprintf(stderr, "fluxmap-cli: batch plan: %s: %s\n", p->where, p->reason);
    }
    if (code == FM_EXIT_OK && problems->len > 0 && !skip_bad)
        code = fm_cli_fail(FM_EXIT_USAGE,
                           _("batch plan: %u of %u items cannot run; nothing written "
                             "(--skip-bad plans the others)"),
                           problems->len, problems->len + plan->items->len);
    else if (code == FM_EXIT_OK && plan->items->len == 0)
        code = fm_cli_fail(FM_EXIT_USAGE, _("batch plan: no item to run"));
    if (code == FM_EXIT_OK && !fm_batch_plan_save(plan, run_dir, &error))
        code = fm_cli_fail_error(error);
    if (code == FM_EXIT_OK) {
        printf(_("planned %u items in %s (batch %s)"), plan->items->len, run_dir, plan->batch_id);
        if (problems->len)
            printf(_("; %u bad items left out"), problems->len);
        if (skipped)
            printf(_("; %d files no reader takes skipped"), skipped);
        printf("\n");
        if (hint)
            printf(_("run: fluxmap-cli batch run %s [--task I --ntasks N]\n"), run_dir);
    }
    fm_cli_args_clear(&args);
    return code;
}

/* ---- run ---- */

static const fm_cli_option run_options[] = {
    {"task", TRUE},        {"ntasks", TRUE}, {"backend", TRUE},       {"json", FALSE},
    {"sequential", FALSE}, {"help", FALSE},  {"retry_failed", FALSE},
};

typedef struct {
    gboolean bar; /* a terminal: one line redrawn; else JSON lines */
} progress_out;

static void format_duration(char *out, gsize n, double s)
{
    if (!isfinite(s) || s < 0)
        g_snprintf(out, n, "--:--");
    else if (s >= 3600)
        g_snprintf(out, n, "%d:%02d:%02d", (int)(s / 3600), (int)fmod(s / 60, 60),
                   (int)fmod(s, 60));
    else
        g_snprintf(out, n, "%d:%02d", (int)(s / 60), (int)fmod(s, 60));
}

static void on_item(const fm_batch_event *ev, gpointer user)
{
    const progress_out *out = user;
    int finished = ev->done + ev->failed;
    double rate = ev->elapsed_s > 0 ? finished / ev->elapsed_s : 0;
    double left = rate > 0 ? (ev->total - finished) / rate : NAN;
    if (out->bar) {
        enum { WIDTH = 24 };
        char bar[WIDTH + 1];
        int filled = ev->total ? WIDTH * finished / ev->total : WIDTH;
        for (int i = 0; i < WIDTH; i++)
            bar[i] = i < filled ? '#' : '.';
        bar[WIDTH] = '\0';
        char eta[32];
        format_duration(eta, sizeof eta, left);
        /* a failed item's reason stays on screen above the bar; \033[K clears the line */
        if (!ev->ok)
            fprintf(stderr, _("\r\033[Kitem %d (%s) failed: %s\n"), ev->index, ev->input,
                    ev->message);
        fprintf(stderr, _("\r\033[K[%s] %d/%d items  %.2f items/s  %s left"), bar, finished,
                ev->total, rate, eta);
        if (ev->failed)
            fprintf(stderr, _("  %d failed"), ev->failed);
        fflush(stderr);
        return;
    }
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fm_cli_json_member_string(b, "event", "item");
    fm_cli_json_member_int(b, "index", ev->index);
    fm_cli_json_member_string(b, "input", ev->input);
    fm_cli_json_member_string(b, "status", ev->ok ? "done" : "failed");
    if (!ev->ok)
        fm_cli_json_member_string(b, "error", ev->message);
    fm_cli_json_member_int(b, "done", ev->done);
    fm_cli_json_member_int(b, "failed", ev->failed);
    fm_cli_json_member_int(b, "total", ev->total);
    fm_cli_json_member_number(b, "items_per_s", rate);
    fm_cli_json_member_number(b, "seconds_left", left);
    fm_cli_json_member_number(b, "read_ms", ev->read_ms);
    fm_cli_json_member_number(b, "compute_ms", ev->compute_ms);
    fm_cli_json_member_number(b, "write_ms", ev->write_ms);
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autofree char *text = json_to_string(root, FALSE);
    printf("%s\n", text);
    fflush(stdout);
}

static void print_summary(const fm_batch_task_summary *s, const fm_batch_task_options *o,
                          gboolean json)
{
    int n = s->done + s->failed;
    if (json) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        fm_cli_json_member_string(b, "event", "task");
        fm_cli_json_member_int(b, "task", o->task);
        fm_cli_json_member_int(b, "ntasks", o->ntasks);
        fm_cli_json_member_string(b, "shard", s->shard_dir);
        json_builder_set_member_name(b, "was_complete");
        json_builder_add_boolean_value(b, s->was_complete);
        fm_cli_json_member_int(b, "retry", s->retry);
        fm_cli_json_member_int(b, "items", s->items);
        fm_cli_json_member_int(b, "done", s->done);
        fm_cli_json_member_int(b, "failed", s->failed);
        fm_cli_json_member_number(b, "wall_s", s->wall_s);
        fm_cli_json_member_number(b, "device_start_ms", s->device_start_ms);
        fm_cli_json_member_number(b, "per_item_ms", n ? 1000 * s->wall_s / n : NAN);
        fm_cli_json_member_number(b, "read_ms", n ? s->read_ms / n : NAN);
        fm_cli_json_member_number(b, "compute_ms", n ? s->compute_ms / n : NAN);
        fm_cli_json_member_number(b, "write_ms", n ? s->write_ms / n : NAN);
        /* the compute stage's parts per item: what a faster batch has to shorten */
        json_builder_set_member_name(b, "compute_parts_ms");
        json_builder_begin_object(b);
        const fm_stage parts[] = {FM_STAGE_CATALOGUE, FM_STAGE_PREPARE, FM_STAGE_UPLOAD,
                                  FM_STAGE_COMPUTE, FM_STAGE_DOWNLOAD};
        for (guint k = 0; k < G_N_ELEMENTS(parts); k++)
            fm_cli_json_member_number(b, fm_stage_key(parts[k]),
                                      n ? s->stages.ms[parts[k]] / n : NAN);
        json_builder_end_object(b);
        fm_cli_json_member_number(b, "release_ms", n ? s->release_ms / n : NAN);
        json_builder_end_object(b);
        g_autoptr(JsonNode) root = json_builder_get_root(b);
        g_autofree char *text = json_to_string(root, FALSE);
        printf("%s\n", text);
        return;
    }
    if (s->was_complete) {
        printf(_("task %d of %d is complete already (%d done, %d failed): %s\n"), o->task,
               o->ntasks, s->done, s->failed, s->shard_dir);
        if (s->failed && !o->retry_failed)
            printf(_("--retry-failed runs the failed items again\n"));
        return;
    }
    printf(_("task %d of %d: %d items, %d done, %d failed in %.1f s (%.1f ms per item; per item "
             "read %.1f, compute %.1f, write %.1f ms)\n%s\n"),
           o->task, o->ntasks, s->items, s->done, s->failed, s->wall_s,
           n ? 1000 * s->wall_s / n : 0.0, n ? s->read_ms / n : 0.0, n ? s->compute_ms / n : 0.0,
           n ? s->write_ms / n : 0.0, s->shard_dir);
}

/* Ctrl-C stops a batch after the items in progress (they are written, a rerun does the rest);
 * a second Ctrl-C quits at once. SIGINT is blocked in every thread and taken here by sigwait,
 * where cancelling is safe (not in a signal handler). */
static gpointer sigint_watch(gpointer cancellable)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    int sig = 0;
    if (sigwait(&set, &sig) != 0)
        return NULL;
    fprintf(stderr, _("\nstopping after the items in progress (Ctrl-C again to quit now)\n"));
    g_cancellable_cancel(cancellable);
    if (sigwait(&set, &sig) == 0)
        _exit(130);
    return NULL;
}

static void watch_sigint(GCancellable *cancellable)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* before the task's threads: they inherit it */
    g_thread_unref(g_thread_new("batch-sigint", sigint_watch, g_object_ref(cancellable)));
}

static int run_body(const fm_cli_args *args)
{
    if (fm_cli_has(args, "help")) {
        print_help();
        return FM_EXIT_OK;
    }
    if (args->positional->len != 1)
        return fm_cli_fail(FM_EXIT_USAGE, _("batch run: expected RUN/, got %u arguments"),
                           args->positional->len);
    fm_batch_task_options o = {.run_dir = args->positional->pdata[0], .task = 0, .ntasks = 1};
    g_autofree char *message = NULL;
    if (!fm_cli_get_int(args, "task", &o.task, &message) ||
        !fm_cli_get_positive_int(args, "ntasks", &o.ntasks, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "batch run: %s", message);
    if (o.task < 0 || o.task >= o.ntasks)
        return fm_cli_fail(FM_EXIT_USAGE, _("batch run: --task %d is not in 0..%d"), o.task,
                           o.ntasks - 1);
    const char *backend_text = fm_cli_get(args, "backend");
    o.backend = FM_BACKEND_AUTO;
    if (backend_text && fm_backend_parse(backend_text, &o.backend) != FM_OK)
        return fm_cli_fail(FM_EXIT_USAGE, _("--backend: '%s' is not one of auto, cpu, cuda"),
                           backend_text);
    gboolean json = fm_cli_has(args, "json") || !isatty(STDERR_FILENO);
    progress_out out = {!json};
    o.sequential = fm_cli_has(args, "sequential");
    o.retry_failed = fm_cli_has(args, "retry_failed");
    o.on_item = on_item;
    o.user = &out;
    g_autoptr(GCancellable) cancellable = g_cancellable_new();
    o.cancellable = cancellable;
    watch_sigint(cancellable);
    fm_batch_task_summary summary = {0};
    g_autoptr(GError) error = NULL;
    gboolean ok = fm_batch_task_run(&o, &summary, &error);
    if (out.bar && summary.done + summary.failed > 0)
        fprintf(stderr, "\n");
    int code = ok ? FM_EXIT_OK : fm_cli_fail_error(error);
    if (ok)
        print_summary(&summary, &o, json);
    if (ok && summary.cancelled) {
        fprintf(stderr, _("batch run: interrupted; what ran is in the shard, run it again for the "
                          "rest\n"));
        code = 130; /* as a shell reports Ctrl-C */
    }
    g_free(summary.shard_dir);
    return code;
}

/* ---- merge ---- */

static const fm_cli_option merge_options[] = {
    {"catalogue", TRUE}, {"ntasks", TRUE}, {"json", FALSE}, {"help", FALSE}};

static void add_int_array(JsonBuilder *b, const char *name, GArray *values)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_array(b);
    for (guint i = 0; i < values->len; i++)
        json_builder_add_int_value(b, g_array_index(values, int, i));
    json_builder_end_array(b);
}

static int merge_body(const fm_cli_args *args)
{
    if (fm_cli_has(args, "help")) {
        print_help();
        return FM_EXIT_OK;
    }
    if (args->positional->len != 1)
        return fm_cli_fail(FM_EXIT_USAGE, _("batch merge: expected RUN/, got %u arguments"),
                           args->positional->len);
    int ntasks = 0;
    g_autofree char *message = NULL;
    if (!fm_cli_get_positive_int(args, "ntasks", &ntasks, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "batch merge: %s", message);
    const char *dir_arg = fm_cli_get(args, "catalogue");
    g_autofree char *dir = dir_arg ? g_strdup(dir_arg) : fm_catalogue_default_dir();
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(dir, &error);
    if (cat == NULL)
        return fm_cli_fail(FM_EXIT_INPUT, _("catalogue: %s"), error->message);
    fm_batch_merge_report r = {0};
    if (!fm_batch_merge(args->positional->pdata[0], cat, ntasks, &r, &error)) {
        fm_batch_merge_report_clear(&r);
        return fm_cli_fail_error(error);
    }
    g_autofree char *missing = fm_batch_array_ranges(r.missing_tasks);
    g_autofree char *failed = fm_batch_array_ranges(r.failed_items);
    if (fm_cli_has(args, "json")) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        fm_cli_json_member_string(b, "catalogue", fm_catalogue_dir(cat));
        fm_cli_json_member_int(b, "shards", r.shards);
        fm_cli_json_member_int(b, "added", r.added);
        fm_cli_json_member_int(b, "replaced", r.replaced);
        fm_cli_json_member_int(b, "kept", r.kept);
        fm_cli_json_member_int(b, "ntasks", r.ntasks);
        add_int_array(b, "missing_tasks", r.missing_tasks);
        fm_cli_json_member_string(b, "missing_array", missing);
        fm_cli_json_member_int(b, "missing_items", r.missing_items);
        add_int_array(b, "failed_items", r.failed_items);
        json_builder_end_object(b);
        fm_cli_json_print(b);
    } else {
        printf(_("merged %d shards into %s: %d runs added, %d replaced, %d there already\n"),
               r.shards, fm_catalogue_dir(cat), r.added, r.replaced, r.kept);
        if (r.failed_items->len)
            printf(_("failed items: %s\n"), failed);
        if (r.missing_tasks->len)
            printf(_("missing tasks: %s (of %d; %d items)\n"), missing, r.ntasks, r.missing_items);
        else
            printf(_("missing tasks: none\n"));
    }
    int code = r.missing_tasks->len ? 1 : FM_EXIT_OK;
    fm_batch_merge_report_clear(&r);
    return code;
}

int fm_cli_batch(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        if (argc < 1) {
            fm_cli_fail(FM_EXIT_USAGE, _("batch: missing plan, run or merge"));
            return FM_EXIT_USAGE;
        }
        print_help();
        return FM_EXIT_OK;
    }
    if (strcmp(argv[0], "plan") == 0)
        return fm_cli_batch_plan(argc - 1, argv + 1, TRUE);
    if (strcmp(argv[0], "run") == 0)
        return fm_cli_parse_and_run(argc - 1, argv + 1, "batch run", run_options,
                                    G_N_ELEMENTS(run_options), run_body);
    if (strcmp(argv[0], "submit") == 0)
        return fm_cli_batch_submit(argc - 1, argv + 1);
    if (strcmp(argv[0], "merge") == 0)
        return fm_cli_parse_and_run(argc - 1, argv + 1, "batch merge", merge_options,
                                    G_N_ELEMENTS(merge_options), merge_body);
    /* the one-command form starts with its METHOD, its MANIFEST or an option (-o RUN/) */
    if (argv[0][0] != '-' && fm_method_find(argv[0]) == NULL && !is_manifest(argv[0]))
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("batch: unknown command '%s' (plan, run, merge, submit, or "
                             "-o RUN/ METHOD FILES... to plan, run and merge at once)"),
                           argv[0]);
    return fm_cli_batch_all(argc, argv);
}
