/* `fluxmap-cli mcml run`: one MCML simulation from an .mci file or a preset, written as an .mco
 * (MCML's layout) plus float32 TIFFs of A[r][z] and fluence, recorded in the catalogue (its
 * chunked form and `mcml merge`: cli-mcml-chunks.c). */
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/cli-mcml.h"
#include "app/core/catalogue.h"
#include "app/core/error.h"
#include "app/core/export.h"
#include "app/core/io/mci.h"
#include "app/core/io/mco.h"
#include "app/core/method.h"
#include "app/core/mcml/mcml_methods.h"
#include "kernels/device.h"

static const fm_cli_option options[] = {
    {"output", TRUE}, {"preset", TRUE},        {"photons", TRUE},  {"seed", TRUE},
    {"run", TRUE},    {"backend", TRUE},       {"rt_only", FALSE}, {"json", FALSE},
    {"help", FALSE},  {"no_catalogue", FALSE}, {"chunks", TRUE},   {"chunk_range", TRUE},
    {"task", TRUE},   {"ntasks", TRUE},
};

static void print_help(void)
{
    printf("%s", _("Usage: fluxmap-cli mcml run FILE.mci|--preset NAME -o OUT.mco\n"
                   "          [--photons N] [--seed S] [--run K] [--backend=auto|cpu|cuda]\n"
                   "          [--rt-only] [--json] [--no-catalogue]\n"
                   "       fluxmap-cli mcml run FILE.mci|--preset NAME --chunks N -o DIR\n"
                   "          [--photons N] [--chunk-range A-B | --task I --ntasks T] [...]\n"
                   "       fluxmap-cli mcml merge DIR -o OUT.mco [--json] [--no-catalogue]\n"
                   "Simulates run K (default 1) of an MCML input file or a built-in preset\n"
                   "(skin7_600nm, intralipid10, mcml_sample) and writes OUT.mco in MCML's\n"
                   "layout plus OUT-a_rz.tif and OUT-fluence_rz.tif (float32). --photons\n"
                   "overrides the file's photon count (up to 9e15, e.g. 1e11); --rt-only skips\n"
                   "A[r][z]. With --chunks the photons are split into N chunks,\n"
                   "each drawing from its own random streams (chosen by its photon indices), and\n"
                   "each chunk's raw tallies go to DIR/chunk-NNNNNN.mcchunk when complete;\n"
                   "--chunk-range runs chunks A..B, --task I --ntasks T the chunks c with\n"
                   "c mod T = I (I from 0); chunks already complete are skipped. merge sums\n"
                   "every chunk of DIR and writes OUT.mco and its maps as one run would: the\n"
                   "same bits whichever tasks, threads or nodes ran the chunks, and records\n"
                   "the merged run in the catalogue.\n"));
}

static void report_progress(double fraction, gpointer user)
{
    fprintf(stderr, "\rmcml: %3.0f%%", 100.0 * fraction);
    fflush(stderr);
}

void fm_cli_mcml_print_json(const fm_result *result, const fm_mcml_result *r, const char *mco,
                            GPtrArray *tiffs, gint64 run_id)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fm_cli_json_member_string(b, "method", "mcml.run");
    fm_cli_json_member_string(b, "backend", result->backend ? result->backend : "cpu");
    fm_cli_json_member_string(b, "device", result->device ? result->device : "");
    fm_cli_json_member_number(b, "elapsed_ms", result->elapsed_ms);
    fm_cli_json_member_int(b, "photons", r->photons_done);
    const char *names[] = {"rsp", "rd", "a", "tt", "rd_se", "a_se", "tt_se"};
    const double values[] = {r->rsp, r->rd, r->a, r->tt, r->rd_se, r->a_se, r->tt_se};
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        fm_cli_json_member_number(b, names[i], values[i]);
    }
    fm_cli_json_member_string(b, "note", result->note ? result->note : "");
    fm_cli_json_member_string(b, "mco", mco);
    json_builder_set_member_name(b, "tiffs");
    json_builder_begin_array(b);
    for (guint i = 0; i < tiffs->len; i++)
        json_builder_add_string_value(b, tiffs->pdata[i]);
    json_builder_end_array(b);
    fm_cli_json_member_run_id(b, run_id);
    json_builder_end_object(b);
    fm_cli_json_print(b);
}

/* Options to mcml.run parameters; exit 2 for bad values. */
static int build_params(const fm_cli_args *args, fm_params *params, fm_backend *backend)
{
    const char *keys[][2] = {
        {"preset", "preset"}, {"photons", "photons"}, {"seed", "seed"}, {"run", "run"}};
    for (gsize i = 0; i < G_N_ELEMENTS(keys); i++) {
        const char *value = fm_cli_get(args, keys[i][0]);
        g_autoptr(GError) error = NULL;
        if (value && !fm_params_set_from_string(params, keys[i][1], value, &error))
            return fm_cli_fail(FM_EXIT_USAGE, "mcml: %s", error->message);
    }
    if (fm_cli_has(args, "rt_only"))
        fm_params_set_from_string(params, "mode", "rt_only", NULL);
    if (args->positional->len == 1)
        fm_params_set_from_string(params, "mci_file", args->positional->pdata[0], NULL);
    const char *backend_text = fm_cli_get(args, "backend");
    *backend = FM_BACKEND_AUTO;
    if (backend_text && fm_backend_parse(backend_text, backend) != FM_OK)
        return fm_cli_fail(FM_EXIT_USAGE, _("--backend: '%s' is not one of auto, cpu, cuda"),
                           backend_text);
    return FM_EXIT_OK;
}

int fm_cli_mcml_write_outputs(const char *mco, const fm_mci_run *run, const fm_result *result,
                              fm_mcml_result *r, GPtrArray *tiffs)
{
    g_autoptr(GError) error = NULL;
    if (!fm_mcml_result_from_maps(result, &run->params, r, &error) ||
        !fm_mco_write(mco, run, r, result->elapsed_ms / 1000.0, &error))
        return fm_cli_fail_error(error);
    g_autofree char *stem =
        g_str_has_suffix(mco, ".mco") ? g_strndup(mco, strlen(mco) - 4) : g_strdup(mco);
    const char *maps[] = {"a_rz", "fluence_rz"};
    for (gsize i = 0; i < G_N_ELEMENTS(maps); i++) {
        const fm_map *map = fm_result_get_map(result, maps[i]);
        if (map == NULL)
            continue; /* reflectance/transmittance-only mode */
        char *path = g_strdup_printf("%s-%s.tif", stem, maps[i]);
        g_ptr_array_add(tiffs, path);
        if (!fm_export_tiff(path, map, "mcml.run", "r across (dr), z down (dz)", &error))
            return fm_cli_fail_error(error);
    }
    return FM_EXIT_OK;
}

static int mcml_run_parsed(const fm_cli_args *parsed)
{
    const fm_cli_args args = *parsed;
    if (fm_cli_has(&args, "help")) {
        print_help();
        return FM_EXIT_OK;
    }
    if (args.positional->len > 1)
        return fm_cli_fail(FM_EXIT_USAGE, _("mcml run: expected one FILE.mci, got %u"),
                           args.positional->len);
    if (args.positional->len == 1 && fm_cli_has(&args, "preset"))
        return fm_cli_fail(FM_EXIT_USAGE, _("mcml run: give FILE.mci or --preset, not both"));
    if (args.positional->len == 0 && !fm_cli_has(&args, "preset"))
        return fm_cli_fail(FM_EXIT_USAGE, _("mcml run: missing FILE.mci or --preset NAME"));
    const char *mco = fm_cli_get(&args, "output");
    if (!mco || !*mco)
        return fm_cli_fail(FM_EXIT_USAGE, _("mcml run: missing -o OUT.mco"));

    const fm_method *method = fm_method_find("mcml.run");
    g_autoptr(fm_params) params = fm_method_default_params(method);
    fm_backend backend;
    int code = build_params(&args, params, &backend);
    if (code != FM_EXIT_OK)
        return code;

    /* the input is read and checked before anything is written or recorded (exit 3) */
    g_autoptr(GError) error = NULL;
    fm_mci_run run;
    if (!fm_mcml_resolve_input(params, NULL, &run, &error))
        return fm_cli_fail_error(error);
    g_autofree char *output_name = run.output_name;
    if (fm_cli_has(&args, "chunks"))
        return fm_cli_mcml_run_chunks(&args, params, &run, backend);
    g_autoptr(fm_dataset) input = NULL;
    if (args.positional->len == 1 &&
        !(input = fm_mci_dataset_new(args.positional->pdata[0], &error)))
        return fm_cli_fail_error(error);

    g_auto(fm_cli_record) record = {0};
    code = fm_cli_record_begin(&record, &args, input, method->id, params, NULL);
    if (code != FM_EXIT_OK)
        return code;

    fm_job_context context = {.backend = backend};
    if (isatty(STDERR_FILENO))
        context.progress = report_progress;
    g_autoptr(fm_result) result = fm_method_run(method, input, params, NULL, &context, &error);
    if (context.progress)
        fprintf(stderr, "\n");
    if (!result) {
        fm_cli_record_abort(&record, error);
        return fm_cli_fail_error(error);
    }
    fm_mcml_result r;
    memset(&r, 0, sizeof r);
    g_autoptr(GPtrArray) tiffs = g_ptr_array_new_with_free_func(g_free);
    code = fm_cli_mcml_write_outputs(mco, &run, result, &r, tiffs);
    code = fm_cli_record_end(&record, code, result, _("writing the outputs failed"));
    if (code == FM_EXIT_OK) {
        if (fm_cli_has(&args, "json"))
            fm_cli_mcml_print_json(result, &r, mco, tiffs, record.run_id);
        else
            printf(_("mcml.run on %s (%s): %.1f ms\n%s\nwrote %s\n"),
                   result->backend ? result->backend : "cpu", result->device ? result->device : "",
                   result->elapsed_ms, result->note ? result->note : "", mco);
    }
    fm_mcml_result_clear(&r);
    return code;
}

int fm_cli_mcml(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        print_help();
        return argc < 1 ? FM_EXIT_USAGE : FM_EXIT_OK;
    }
    if (strcmp(argv[0], "run") == 0)
        return fm_cli_parse_and_run(argc - 1, argv + 1, "mcml run", options, G_N_ELEMENTS(options),
                                    mcml_run_parsed);
    if (strcmp(argv[0], "merge") == 0)
        return fm_cli_mcml_merge(argc - 1, argv + 1);
    return fm_cli_fail(FM_EXIT_USAGE, _("mcml: unknown sub-command '%s' (try 'run' or 'merge')"),
                       argv[0]);
}
