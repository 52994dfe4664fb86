/* `fluxmap-cli mcml run --chunks N -o DIR` (one task's share of an MCML run, a file of raw
 * tallies per chunk) and `fluxmap-cli mcml merge DIR -o OUT.mco` (their sum, written as one run).
 */
#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/cli-mcml.h"
#include "app/core/error.h"
#include "app/core/mcml/mcml_chunk_files.h"
#include "app/core/mcml/mcml_methods.h"
#include "app/core/method.h"
#include "app/core/params.h"
#include "kernels/device.h"

/* "A-B" or "A" (inclusive) within 0..n-1. */
static gboolean parse_range(const char *text, long long n, long long *lo, long long *hi)
{
    char *end = NULL;
    *lo = g_ascii_strtoll(text, &end, 10);
    if (end == text)
        return FALSE;
    *hi = *lo;
    if (*end == '-') {
        const char *b = end + 1;
        *hi = g_ascii_strtoll(b, &end, 10);
        if (end == b)
            return FALSE;
    }
    return *end == '\0' && *lo >= 0 && *lo <= *hi && *hi < n;
}

static gboolean parse_count(const fm_cli_args *args, const char *name, long long *out)
{
    const char *text = fm_cli_get(args, name);
    char *end = NULL;
    if (!text)
        return FALSE;
    *out = g_ascii_strtoll(text, &end, 10);
    return end != text && *end == '\0';
}

typedef struct {
    const char *dir;
    char *source; /* the input, for the merged run's record (chunk_source) */
    fm_mcml_chunk_run run;
    gboolean json;
    GError *error;
    long long n_run, n_done;
} chunk_writer;

static fm_status write_chunk(void *user, long long chunk, const fm_mcml_raw *raw,
                             const fm_run_info *info, char *msg, size_t msg_len)
{
    chunk_writer *w = user;
    const char *backend = info->backend_used == FM_BACKEND_CUDA ? "cuda" : "cpu";
    if (!fm_mcml_chunk_write(w->dir, &w->run, chunk, raw, backend, info->device_name, w->source,
                             info->elapsed_ms, &w->error)) {
        snprintf(msg, msg_len, "%s", w->error->message);
        return FM_ERR_INVALID_ARG;
    }
    w->n_done++;
    if (!w->json)
        printf(_("chunk %lld: %lld photons on %s in %.1f ms (%lld of %lld)\n"), chunk,
               raw->photons_done, info->device_name, info->elapsed_ms, w->n_done, w->n_run);
    fflush(stdout);
    return FM_OK;
}

static int report_progress(void *user, double fraction)
{
    fprintf(stderr, "\rmcml chunks: %3.0f%%", 100.0 * fraction);
    fflush(stderr);
    return 0;
}

/* The chunks this call owns: --chunk-range A-B, --task I --ntasks T (c mod T = I), or all. An
 * exit code (printed) when the options are bad. */
static int owned_chunks(const fm_cli_args *args, long long n_chunks, GArray *out)
{
    const gboolean range = fm_cli_has(args, "chunk_range");
    const gboolean task = fm_cli_has(args, "task") || fm_cli_has(args, "ntasks");
    long long lo = 0, hi = n_chunks - 1, step = 1;
    if (range && task)
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("mcml run: give --chunk-range or --task/--ntasks, not both"));
    if (range && !parse_range(fm_cli_get(args, "chunk_range"), n_chunks, &lo, &hi))
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("--chunk-range: '%s' is not A-B with 0 <= A <= B <= %lld"),
                           fm_cli_get(args, "chunk_range"), n_chunks - 1);
    if (task) {
        long long i = -1, t = 0;
        if (!parse_count(args, "task", &i) || !parse_count(args, "ntasks", &t) || t < 1 || i < 0 ||
            i >= t)
            return fm_cli_fail(FM_EXIT_USAGE,
                               _("--task I --ntasks T: both needed, with 0 <= I < T"));
        lo = i;
        step = t;
    }
    for (long long c = lo; c <= hi; c += step)
        g_array_append_val(out, c);
    return FM_EXIT_OK;
}

/* What the chunks were made from, as their files keep it: "preset:NAME", or "mci:K:PATH" (run
 * K of the .mci file at PATH, made absolute). g_free it. */
static char *chunk_source(const fm_params *params)
{
    const char *file = fm_params_get_string(params, "mci_file");
    if (file == NULL || *file == '\0')
        return g_strdup_printf("preset:%s", fm_params_get_choice(params, "preset"));
    g_autofree char *absolute = g_canonicalize_filename(file, NULL);
    return g_strdup_printf("mci:%d:%s", fm_params_get_int(params, "run"), absolute);
}

/* mcml.run's parameters for merged chunks: their input, photons, seed and mode. */
static fm_params *merged_run_params(const fm_mcml_params *p, const char *source)
{
    fm_params *params = fm_method_default_params(fm_method_find("mcml.run"));
    char *end = NULL;
    if (g_str_has_prefix(source, "preset:")) {
        fm_params_set_from_string(params, "preset", source + strlen("preset:"), NULL);
    } else if (g_str_has_prefix(source, "mci:")) {
        long run = strtol(source + strlen("mci:"), &end, 10);
        if (end && *end == ':') {
            fm_params_set_double(params, "run", (double)run, NULL);
            fm_params_set_from_string(params, "mci_file", end + 1, NULL);
        }
    }
    fm_params_set_double(params, "photons", (double)p->n_photons, NULL);
    fm_params_set_double(params, "seed", (double)p->seed, NULL);
    fm_params_set_from_string(params, "mode", p->record_absorption ? "full" : "rt_only", NULL);
    return params;
}

int fm_cli_mcml_run_chunks(const fm_cli_args *args, const fm_params *run_params,
                           const fm_mci_run *input, fm_backend backend)
{
    fm_mcml_params params = input->params; /* --photons (to 9e15, "1e11" too) applied */
    long long n_chunks = 0;
    if (!parse_count(args, "chunks", &n_chunks) || n_chunks < 1 || n_chunks > params.n_photons)
        return fm_cli_fail(FM_EXIT_USAGE, _("--chunks: expected 1..%lld (photons), got '%s'"),
                           params.n_photons, fm_cli_get(args, "chunks"));
    if ((params.n_photons + n_chunks - 1) / n_chunks > FM_MCML_CHUNK_MAX)
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("--chunks: %lld photons need at least %lld chunks (at most %lld "
                             "photons a chunk keeps its tallies in 64 bits)"),
                           params.n_photons,
                           (params.n_photons + FM_MCML_CHUNK_MAX - 1) / FM_MCML_CHUNK_MAX,
                           FM_MCML_CHUNK_MAX);
    char msg[FM_MSG_LEN] = "";
    if (fm_mcml_check(&params, msg, sizeof msg) != FM_OK)
        return fm_cli_fail(FM_EXIT_USAGE, "mcml: %s", msg);
    const char *dir = fm_cli_get(args, "output");
    if (g_mkdir_with_parents(dir, 0755) != 0)
        return fm_cli_fail(FM_EXIT_INPUT, _("%s: cannot make the folder: %s"), dir,
                           g_strerror(errno));
    g_autofree char *source = chunk_source(run_params);
    chunk_writer w = {.dir = dir, .source = source, .json = fm_cli_has(args, "json")};
    fm_mcml_chunk_run_init(&w.run, &params, input->output_name, n_chunks);

    g_autoptr(GArray) owned = g_array_new(FALSE, FALSE, sizeof(long long));
    int code = owned_chunks(args, n_chunks, owned);
    if (code != FM_EXIT_OK)
        return code;
    /* What is complete already is skipped: a rerun of a task redoes only what a kill lost. */
    g_autoptr(GArray) todo = g_array_new(FALSE, FALSE, sizeof(long long));
    g_autoptr(GArray) before = g_array_new(FALSE, FALSE, sizeof(long long));
    for (guint k = 0; k < owned->len; k++) {
        const long long c = g_array_index(owned, long long, k);
        fm_mcml_chunk_state state;
        g_autofree char *why = NULL;
        g_autoptr(GError) error = NULL;
        if (!fm_mcml_chunk_check(dir, &w.run, c, &state, &why, &error))
            return fm_cli_fail_error(error);
        if (state == FM_MCML_CHUNK_DAMAGED)
            fprintf(stderr, _("fluxmap-cli: %s: running it again\n"), why);
        g_array_append_val(state == FM_MCML_CHUNK_DONE ? before : todo, c);
    }
    w.n_run = todo->len;

    fm_run_info info;
    memset(&info, 0, sizeof info);
    fm_status status = FM_OK;
    const gboolean tty = !w.json && isatty(STDERR_FILENO);
    if (todo->len > 0)
        status = fm_mcml_run_chunks(&params, n_chunks, (const long long *)(void *)todo->data,
                                    todo->len, backend, tty ? report_progress : NULL, NULL,
                                    write_chunk, &w, &info, msg, sizeof msg);
    if (tty && todo->len > 0)
        fprintf(stderr, "\n");
    if (w.error) {
        code = fm_cli_fail_error(w.error);
        g_error_free(w.error);
        return code;
    }
    if (status != FM_OK)
        return fm_cli_fail(status == FM_ERR_INVALID_ARG ? FM_EXIT_USAGE : FM_EXIT_COMPUTE,
                           "mcml: %s", msg);

    g_autofree char *ran = fm_mcml_index_list((const long long *)(void *)todo->data, todo->len);
    g_autofree char *skipped =
        fm_mcml_index_list((const long long *)(void *)before->data, before->len);
    if (w.json) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        fm_cli_json_member_string(b, "method", "mcml.run");
        fm_cli_json_member_int(b, "chunks", n_chunks);
        fm_cli_json_member_int(b, "photons", params.n_photons);
        fm_cli_json_member_string(b, "ran", ran);
        fm_cli_json_member_string(b, "done_before", skipped);
        fm_cli_json_member_string(b, "backend",
                                  info.backend_used == FM_BACKEND_CUDA ? "cuda" : "cpu");
        fm_cli_json_member_string(b, "device", info.device_name);
        fm_cli_json_member_number(b, "elapsed_ms", info.elapsed_ms);
        fm_cli_json_member_string(b, "dir", dir);
        json_builder_end_object(b);
        fm_cli_json_print(b);
    } else {
        printf(_("mcml chunks of %lld photons in %lld: ran %s, complete before %s; %.1f ms\n"
                 "wrote %s\n"),
               params.n_photons, n_chunks, *ran ? ran : "none", *skipped ? skipped : "none",
               info.elapsed_ms, dir);
    }
    return FM_EXIT_OK;
}

static const fm_cli_option merge_options[] = {
    {"output", TRUE},
    {"json", FALSE},
    {"no_catalogue", FALSE},
    {"help", FALSE},
};

static void print_merge_help(void)
{
    printf("%s", _("Usage: fluxmap-cli mcml merge DIR -o OUT.mco [--json] [--no-catalogue]\n"
                   "Sums the raw tallies of every chunk in DIR (written by mcml run --chunks)\n"
                   "in chunk order and writes OUT.mco, OUT-a_rz.tif and OUT-fluence_rz.tif as\n"
                   "one run of all their photons writes them, and records that run in the\n"
                   "catalogue. Missing or damaged chunks are listed in the form Slurm's --array\n"
                   "takes (exit 3).\n"));
}

/* Writes the merged run's .mco and maps, recorded in the catalogue as the one run of all the
 * photons that it equals. */
static int write_merged(const fm_cli_args *args, const char *mco, fm_mcml_merge_info *info,
                        const fm_result *result, fm_mcml_result *r, double start)
{
    fm_mci_run run = {
        .output_name = info->run.output_name, .format = 'A', .params = info->run.params};
    g_autoptr(fm_params) params = merged_run_params(&info->run.params, info->source);
    g_autoptr(GPtrArray) tiffs = g_ptr_array_new_with_free_func(g_free);
    g_auto(fm_cli_record) record = {0};
    int code = fm_cli_record_begin(&record, args, NULL, "mcml.run", params, NULL);
    if (code != FM_EXIT_OK)
        return code;
    code = fm_cli_mcml_write_outputs(mco, &run, result, r, tiffs);
    code = fm_cli_record_end(&record, code, result, _("writing the outputs failed"));
    if (code != FM_EXIT_OK)
        return code;
    if (fm_cli_has(args, "json"))
        fm_cli_mcml_print_json(result, r, mco, tiffs, record.run_id);
    else
        printf(_("mcml merge of %lld chunks (%s): %.1f ms of simulation, merged in %.1f ms\n%s\n"
                 "wrote %s\n"),
               info->run.n_chunks, info->backend, info->elapsed_ms,
               g_get_monotonic_time() / 1000.0 - start, result->note, mco);
    return FM_EXIT_OK;
}

static int merge_parsed(const fm_cli_args *args)
{
    if (fm_cli_has(args, "help")) {
        print_merge_help();
        return FM_EXIT_OK;
    }
    if (args->positional->len != 1)
        return fm_cli_fail(FM_EXIT_USAGE, _("mcml merge: expected one DIR, got %u"),
                           args->positional->len);
    const char *dir = args->positional->pdata[0], *mco = fm_cli_get(args, "output");
    if (!mco || !*mco)
        return fm_cli_fail(FM_EXIT_USAGE, _("mcml merge: missing -o OUT.mco"));

    fm_mcml_raw sum;
    fm_mcml_merge_info info;
    g_autoptr(GError) error = NULL;
    const double start = g_get_monotonic_time() / 1000.0;
    if (!fm_mcml_chunks_merge(dir, &sum, &info, &error)) {
        for (guint i = 0; info.damaged && i < info.damaged->len; i++)
            fprintf(stderr, "fluxmap-cli: %s\n", (const char *)info.damaged->pdata[i]);
        if (info.missing && info.missing->len > 0) {
            g_autofree char *list = fm_mcml_index_list(
                (const long long *)(void *)info.missing->data, info.missing->len);
            printf("missing: %s\n", list);
        }
        fm_mcml_merge_info_clear(&info);
        return fm_cli_fail_error(error);
    }
    const fm_mcml_params *p = &info.run.params;
    fm_mcml_result r;
    fm_mcml_result_alloc(&r, p);
    char msg[FM_MSG_LEN] = "";
    fm_status status = fm_mcml_normalise(p, &sum, &r, msg, sizeof msg);
    fm_mcml_raw_free(&sum);
    int code = FM_EXIT_OK;
    g_autoptr(fm_result) result = NULL;
    if (status != FM_OK) {
        code = fm_cli_fail(FM_EXIT_INPUT, "%s: %s", dir, msg);
        goto out;
    }
    result = fm_mcml_result_to_maps(p, &r, info.backend, info.device);
    /* the .mco's user time: the simulation's, summed over the chunks */
    result->elapsed_ms = info.elapsed_ms;
    {
        g_autofree char *note = result->note;
        result->note = g_strdup_printf(_("%s; %lld chunks merged"), note, info.run.n_chunks);
    }
    fm_mcml_result_clear(&r);
    code = write_merged(args, mco, &info, result, &r, start);
out:
    fm_mcml_result_clear(&r);
    fm_mcml_merge_info_clear(&info);
    return code;
}

int fm_cli_mcml_merge(int argc, char **argv)
{
    return fm_cli_parse_and_run(argc, argv, "mcml merge", merge_options,
                                G_N_ELEMENTS(merge_options), merge_parsed);
}
