/* fluxmap-bench e2e: each family's workload through core, as `fluxmap-cli run` and the GUI run
 * it (read, device start, method, statistics, map files, catalogue), stage by stage: the first
 * run on a freshly opened file and the warm re-run on the same open dataset. */
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_e2e.h"
#include "bench_util.h"
#include "fm_config.h"
#include "app/core/catalogue.h"
#include "app/core/dataset.h"
#include "app/core/device_warmup.h"
#include "app/core/export.h"
#include "app/core/io/open.h"
#include "app/core/method.h"
#include "app/core/roi.h"
#include "app/core/stages.h"
#include "kernels/device.h"

int bench_e2e(int argc, char **argv); /* fluxmap_bench.c dispatches here */

typedef struct {
    fm_stage_times stages;
    double total_ms; /* from the start of the read (or of the warm run) to the catalogue's end */
} run_times;

typedef enum { CUDA_UNKNOWN, CUDA_PRESENT, CUDA_ABSENT } cuda_state;

typedef struct {
    int reps;
    char *work;           /* temporary: map files and the catalogue */
    char *catalogue_dir;  /* work/catalogue, created before the first timed run */
    cuda_state cuda;      /* known after the first CUDA start (which must stay inside a run) */
    double cuda_start_ms; /* that start's own duration, mostly hidden behind the read */
    char cuda_why[FM_MSG_LEN];
    gboolean failed;
} session;

/* One run as app/cli/cli-run.c's execute() does it, timed the same way. *dataset NULL: a first
 * run, which reads the file (with the CUDA start beside it) and opens the catalogue; otherwise a
 * warm re-run on that dataset with the catalogue still open, as the GUI re-runs after a
 * parameter change. note (may be NULL) gets the result's remark for the user, if any. */
static gboolean run_once(session *s, const fm_method *method, const fm_params *params,
                         fm_backend backend, const fm_bench_e2e_input *input, const char *outdir,
                         fm_dataset **dataset, GPtrArray **rois, fm_catalogue **catalogue,
                         run_times *times, char **note, GError **error)
{
    memset(times, 0, sizeof *times);
    fm_stage_times *stages = &times->stages;
    gboolean first_run = !*dataset;
    double t_start = fm_stage_now_ms(), t = t_start;
    if (first_run) {
        g_autoptr(fm_device_warmup) warmup =
            backend == FM_BACKEND_CUDA ? fm_device_warmup_start(NULL, NULL, TRUE) : NULL;
        if (input->rois && !(*rois = fm_roi_list_from_file(input->rois, error)))
            return FALSE;
        if (!(*dataset = fm_dataset_open(input->input, NULL, NULL, NULL, error)))
            return FALSE;
        stages->ms[FM_STAGE_READ] = fm_stage_now_ms() - t;
        if (warmup) {
            int n_devices = 0;
            double start_ms = 0.0;
            const char *why = NULL;
            stages->ms[FM_STAGE_DEVICE_START] =
                fm_device_warmup_wait(warmup, &n_devices, NULL, &start_ms, &why);
            if (s->cuda == CUDA_UNKNOWN)
                s->cuda_start_ms = start_ms;
            s->cuda = n_devices > 0 ? CUDA_PRESENT : CUDA_ABSENT;
            if (n_devices == 0) {
                g_strlcpy(s->cuda_why, why ? why : "unknown", sizeof s->cuda_why);
                return TRUE; /* the caller prints the SKIP row */
            }
        }
    }

    t = fm_stage_now_ms();
    g_autofree char *params_json = fm_params_to_json(params);
    gint64 run_id = 0;
    if (!*catalogue && !(*catalogue = fm_catalogue_open(s->catalogue_dir, error)))
        return FALSE;
    if (!(run_id =
              fm_catalogue_begin_run(*catalogue, *dataset, method->id, params_json, *rois, error)))
        return FALSE;
    stages->ms[FM_STAGE_CATALOGUE] = fm_stage_now_ms() - t;

    fm_job_context context = {.backend = backend, .stages = stages};
    g_autoptr(fm_result) result = fm_method_run(method, *dataset, params, *rois, &context, error);
    if (!result) {
        fm_catalogue_abort_run(*catalogue, run_id, FM_RUN_FAILED, (*error)->message, NULL);
        return FALSE;
    }

    t = fm_stage_now_ms();
    g_autofree fm_map_stats *stats = g_new0(fm_map_stats, MAX(result->maps->len, 1));
    for (guint i = 0; i < result->maps->len; i++)
        stats[i] = fm_map_statistics(result->maps->pdata[i]);
    stages->ms[FM_STAGE_STATISTICS] = fm_stage_now_ms() - t;

    t = fm_stage_now_ms();
    g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
    gboolean written = g_mkdir_with_parents(outdir, 0755) == 0;
    if (!written)
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: cannot create the folder",
                    outdir);
    for (guint i = 0; written && i < result->maps->len; i++) {
        const fm_map *map = result->maps->pdata[i];
        g_autofree char *name = g_strconcat(map->name, ".tif", NULL);
        char *path = g_build_filename(outdir, name, NULL);
        g_ptr_array_add(files, path);
        written = fm_export_tiff(path, map, method->id, NULL, error);
    }
    stages->ms[FM_STAGE_WRITE] = fm_stage_now_ms() - t;
    if (!written) {
        fm_catalogue_abort_run(*catalogue, run_id, FM_RUN_FAILED, (*error)->message, NULL);
        return FALSE;
    }

    t = fm_stage_now_ms();
    g_ptr_array_add(files, NULL); /* NULL-terminated for the catalogue */
    gboolean recorded = fm_catalogue_finish_run_with(
        *catalogue, run_id, result, (const char *const *)files->pdata, stats, error);
    stages->ms[FM_STAGE_CATALOGUE] += fm_stage_now_ms() - t;
    times->total_ms = fm_stage_now_ms() - t_start;
    if (recorded && note)
        *note = g_strdup(result->note);
    return recorded;
}

/* ---- the table ---------------------------------------------------------------------------- */

static int stage_width(int stage)
{
    return MAX(9, (int)strlen(fm_stage_key(stage)));
}

static void print_header(void)
{
    printf("%-16s %-7s %-5s %10s", "method", "backend", "run", "total");
    for (int st = 0; st < FM_N_STAGES; st++)
        printf(" %*s", stage_width(st), fm_stage_key(st));
    printf(" %9s %8s\n", "other", "kernel");
}

/* kernel: the kernel-only figure of the same workload. The family benches (fluxmap-bench lsi,
 * flim, oct, dce) time their kernels on their own synthetic data inside file-local table
 * printers, so there is no figure to call for here: "-", and `fluxmap-bench <family>` prints
 * it. upload + compute + download are this run's kernel calls, host to host. */
static void print_row(const char *method, const char *backend, const char *run,
                      const run_times *times)
{
    printf("%-16s %-7s %-5s %10.1f", method, backend, run, times->total_ms);
    for (int st = 0; st < FM_N_STAGES; st++)
        printf(" %*.1f", stage_width(st), times->stages.ms[st]);
    printf(" %9.1f %8s\n", times->total_ms - fm_stage_times_total(&times->stages), "-");
    fflush(stdout);
}

static int compare_total(const void *a, const void *b)
{
    const run_times *x = a, *y = b;
    return (x->total_ms > y->total_ms) - (x->total_ms < y->total_ms);
}

/* ---- one method on one backend: the first run, then reps warm runs ----------------------- */

static void run_method(session *s, const fm_bench_e2e_method *m, fm_backend backend,
                       const fm_bench_e2e_input *input)
{
    const char *backend_name = fm_backend_name(backend);
    const fm_method *method = fm_method_find(m->id);
    g_autoptr(GError) error = NULL;
    if (!method) {
        printf("%-16s %-7s failed: no such method in this build\n", m->id, backend_name);
        s->failed = TRUE;
        return;
    }
    if (backend == FM_BACKEND_CUDA && s->cuda == CUDA_ABSENT) {
        printf("%-16s cuda: SKIP (no CUDA device: %s)\n", m->id, s->cuda_why);
        return;
    }
    fm_params *params = fm_method_default_params(method);
    for (int i = 0; m->params && m->params[i] && !error; i++) {
        g_auto(GStrv) kv = g_strsplit(m->params[i], "=", 2);
        fm_params_set_from_string(params, kv[0], kv[1], &error);
    }
    g_autofree char *dir_name = g_strdup_printf("%s-%s", m->id, backend_name);
    g_autofree char *outdir = g_build_filename(s->work, "out", dir_name, NULL);
    fm_dataset *dataset = NULL;
    GPtrArray *rois = NULL;
    fm_catalogue *catalogue = NULL; /* per method and backend, as each CLI run opens its own */
    run_times first, *warm = g_new0(run_times, s->reps);
    g_autofree char *note = NULL;
    gboolean ok = !error && run_once(s, method, params, backend, input, outdir, &dataset, &rois,
                                     &catalogue, &first, &note, &error);
    if (ok && backend == FM_BACKEND_CUDA && s->cuda == CUDA_ABSENT) {
        printf("%-16s cuda: SKIP (no CUDA device: %s)\n", m->id, s->cuda_why);
    } else if (ok) {
        print_row(m->id, backend_name, "first", &first);
        for (int r = 0; ok && r < s->reps; r++)
            ok = run_once(s, method, params, backend, input, outdir, &dataset, &rois, &catalogue,
                          &warm[r], NULL, &error);
        if (ok) {
            /* The median run by total (for an even count the lower middle one), so that its
             * stages add up to the total shown. */
            qsort(warm, s->reps, sizeof *warm, compare_total);
            print_row(m->id, backend_name, "warm", &warm[(s->reps - 1) / 2]);
        }
        if (note)
            printf("  %s on %s: %s\n", m->id, backend_name, note);
    }
    if (!ok) {
        printf("%-16s %-7s failed: %s\n", m->id, backend_name, error->message);
        s->failed = TRUE;
    }
    g_free(warm);
    g_clear_pointer(&catalogue, fm_catalogue_close);
    g_clear_pointer(&dataset, fm_dataset_unref);
    g_clear_pointer(&rois, g_ptr_array_unref);
    fm_params_free(params);
}

static void run_workload(session *s, const fm_bench_e2e_workload *w, const char *inputs,
                         gboolean small, const fm_backend *backends, int n_backends)
{
    fm_bench_e2e_input input = {0};
    gboolean generated = FALSE;
    g_autoptr(GError) error = NULL;
    double t0 = fm_bench_now_ms();
    if (!w->prepare(inputs, small, &input, &generated, &error)) {
        printf("\n%s: writing the input failed: %s\n", w->family, error->message);
        s->failed = TRUE;
        fm_bench_e2e_input_clear(&input);
        return;
    }
    GStatBuf st;
    g_autofree char *size = g_format_size(g_stat(input.input, &st) == 0 ? st.st_size : 0);
    g_autofree char *upper = g_ascii_strup(w->family, -1);
    g_autofree char *base = g_path_get_basename(input.input);
    printf("\n%s: %s (%s, %s, %s in %.1f s)\n", upper, base, input.summary, size,
           generated ? "simulated" : "reused", generated ? (fm_bench_now_ms() - t0) / 1e3 : 0.0);
    printf("ms; first = fresh open of the file; warm = median of %d re-runs on the open dataset\n",
           s->reps);
    print_header();
    for (int i = 0; i < w->n_methods; i++)
        for (int b = 0; b < n_backends; b++)
            run_method(s, &w->methods[i], backends[b], &input);
    fm_bench_e2e_input_clear(&input);
}

/* ---- command line --------------------------------------------------------------------------- */

/* The temporary folder: map files, catalogue and (without --dir) the inputs. */
static void remove_tree(const char *path)
{
    GDir *dir = g_file_test(path, G_FILE_TEST_IS_SYMLINK) ? NULL : g_dir_open(path, 0, NULL);
    if (dir) {
        const char *name;
        while ((name = g_dir_read_name(dir))) {
            g_autofree char *child = g_build_filename(path, name, NULL);
            remove_tree(child);
        }
        g_dir_close(dir);
    }
    g_remove(path);
}

/* Exit 2, as for every usage error of fluxmap-bench. */
static int usage_error(GOptionContext *context, const char *message)
{
    fprintf(stderr, "fluxmap-bench e2e: %s\n", message);
    g_autofree char *help = g_option_context_get_help(context, TRUE, NULL);
    fprintf(stderr, "%s", help);
    return 2;
}

int bench_e2e(int argc, char **argv)
{
    g_autofree char *backend_text = NULL, *family = NULL, *dir_option = NULL;
    int reps = 5;
    gboolean small = FALSE;
    GOptionEntry entries[] = {
        {"backend", 0, 0, G_OPTION_ARG_STRING, &backend_text, "cpu, cuda or both (default)", "B"},
        {"family", 0, 0, G_OPTION_ARG_STRING, &family, "lsi, flim, oct, dce or all (default)", "F"},
        {"dir", 0, 0, G_OPTION_ARG_FILENAME, &dir_option,
         "folder for the input files, kept and reused (default: a temporary one, removed)", "DIR"},
        {"reps", 0, 0, G_OPTION_ARG_INT, &reps, "warm re-runs per method, median shown (5)", "N"},
        {"small", 0, 0, G_OPTION_ARG_NONE, &small, "tiny inputs, for CI", NULL},
        G_OPTION_ENTRY_NULL,
    };
    g_set_prgname("fluxmap-bench e2e"); /* argv[0] is "e2e" here */
    g_autoptr(GOptionContext) context = g_option_context_new("- the user's path, stage by stage");
    g_option_context_set_summary(
        context, "Runs each family's bench workload through core as `fluxmap-cli run` does "
                 "(read, CUDA start beside it, method, statistics, float32 TIFF maps, catalogue "
                 "in a temporary folder): the first run on a freshly opened file, then the "
                 "median of --reps warm re-runs on the same open dataset (the GUI after a "
                 "parameter change). Inputs are simulated once into --dir.");
    g_option_context_add_main_entries(context, entries, NULL);
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse(context, &argc, &argv, &error))
        return usage_error(context, error->message);
    if (argc > 1)
        return usage_error(context, "unexpected argument");
    if (reps < 1)
        return usage_error(context, "--reps must be at least 1");

    fm_backend backends[2];
    int n_backends = 0;
    if (!backend_text || strcmp(backend_text, "both") == 0 || strcmp(backend_text, "cpu") == 0)
        backends[n_backends++] = FM_BACKEND_CPU;
    if (!backend_text || strcmp(backend_text, "both") == 0 || strcmp(backend_text, "cuda") == 0)
        backends[n_backends++] = FM_BACKEND_CUDA;
    if (n_backends == 0)
        return usage_error(context, "--backend must be cpu, cuda or both");
    int n_workloads = 0;
    const fm_bench_e2e_workload *workloads = fm_bench_e2e_workloads(&n_workloads);
    gboolean all = !family || strcmp(family, "all") == 0, known = all;
    for (int i = 0; i < n_workloads && !known; i++)
        known = strcmp(family, workloads[i].family) == 0;
    if (!known)
        return usage_error(context, "--family must be lsi, flim, oct, dce or all");

    session s = {.reps = reps};
    s.work = g_dir_make_tmp("fluxmap-e2e-XXXXXX", &error);
    g_autofree char *temporary_inputs =
        s.work && !dir_option ? g_build_filename(s.work, "inputs", NULL) : NULL;
    const char *dir = dir_option ? dir_option : temporary_inputs;
    if (!s.work || g_mkdir_with_parents(dir, 0755) != 0) {
        fprintf(stderr, "fluxmap-bench e2e: %s\n",
                error ? error->message : "cannot create the inputs folder");
        return 3;
    }
    /* A catalogue that exists already, as a user's does: its creation is no run's stage. */
    s.catalogue_dir = g_build_filename(s.work, "catalogue", NULL);
    fm_catalogue *created = fm_catalogue_open(s.catalogue_dir, &error);
    if (!created) {
        fprintf(stderr, "fluxmap-bench e2e: catalogue: %s\n", error->message);
        remove_tree(s.work);
        return 3;
    }
    fm_catalogue_close(created);
    if (!fm_device_cuda_built()) {
        s.cuda = CUDA_ABSENT;
        g_strlcpy(s.cuda_why, "this build has no CUDA", sizeof s.cuda_why);
    }

    printf("fluxmap-bench %s: e2e%s, through core (fm_dataset_open, fm_method_run, "
           "fm_map_statistics, fm_export_tiff, catalogue)\n",
           FM_VERSION, small ? " (--small)" : "");
    printf("CPU twin: %d OpenMP threads; CUDA: %s; inputs in %s%s\n", fm_cpu_threads(),
           fm_device_cuda_built() ? "built, started inside the first CUDA run" : "not built", dir,
           temporary_inputs ? " (temporary)" : "");
    for (int i = 0; i < n_workloads; i++)
        if (all || strcmp(family, workloads[i].family) == 0)
            run_workload(&s, &workloads[i], dir, small, backends, n_backends);
    if (s.cuda == CUDA_PRESENT) {
        fm_gpu_info gpu;
        char why[FM_MSG_LEN];
        if (fm_device_info(0, &gpu, why, sizeof why) == FM_OK)
            printf("\nGPU: %s, %.1f GiB; the CUDA start took %.1f ms, beside the first CUDA "
                   "run's read\n",
                   gpu.name, gpu.total_memory_bytes / 1073741824.0, s.cuda_start_ms);
    }
    printf("\ndevice_start: what is left of the CUDA start to wait for after the read (only the "
           "first CUDA run of this process starts CUDA, as a GUI session or one fluxmap-cli run "
           "does); other = total - stages; kernel: `fluxmap-bench <family>` (upload + compute + "
           "download are this run's kernel calls); with CUDA, maps are page-locked and kept for the "
           "next run as in the GUI, so the first CUDA run pays the pinning that warm runs save\n");
    remove_tree(s.work);
    g_free(s.work);
    g_free(s.catalogue_dir);
    return s.failed ? 1 : 0;
}
